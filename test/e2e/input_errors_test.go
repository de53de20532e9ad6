package e2e

import (
	"testing"
)

// doctor, heal and chaos answer the same input with the same line, through the real binary: a NAME with
// -A is refused as `kubectl get NAME -A` is, an unknown name is named with the kubectl command
// that lists what there is, an unknown --context points to kubectl config get-contexts, and an
// unknown -o lists the formats.
func TestSameInputErrorsAcrossCommands(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	const nameWithA = `error: a NAME is looked up in one namespace, as in kubectl get: pass -n NAMESPACE instead of -A, or drop the NAME`
	notFound := `error: RayCluster "nope" not found in namespace "` + h.NS + `"; list them with: kubectl get rayclusters -n ` + h.NS
	context := `error: context "prod" is not in the kubeconfig; list them with: kubectl config get-contexts --kubeconfig ` + h.SB.Kubeconfig()
	for _, c := range []struct {
		args []string
		code int
		line string
	}{
		{[]string{"doctor", "raycluster/nope", "-A"}, 2, nameWithA},
		{[]string{"heal", "nope", "-A"}, 2, nameWithA},
		{[]string{"doctor", "raycluster/nope", "-n", h.NS}, 5, notFound},
		{[]string{"heal", "raycluster/nope", "-n", h.NS}, 5, notFound},
		{[]string{"chaos", "head-kill", "nope", "--target", "http://127.0.0.1:1/", "-n", h.NS, "--yes"}, 5, notFound},
		{[]string{"chaos", "disk-pressure", "nope", "--size", "1Gi", "-n", h.NS, "--yes"}, 5, notFound},
		{[]string{"doctor", "--context", "prod"}, 3, context},
		{[]string{"heal", "--context", "prod"}, 3, context},
		{[]string{"doctor", "-o", "xml"}, 2, `error: unknown output format "xml": use -o table|wide|json|yaml|junit|prometheus`},
		{[]string{"heal", "-o", "xml"}, 2, `error: unknown output format "xml": use -o text|json`},
		{[]string{"chaos", "head-kill", "nope", "--target", "http://127.0.0.1:1/", "-o", "xml"}, 2, `error: unknown output format "xml": use -o text|json|junit`},
		{[]string{"chaos", "memory-pressure", "nope", "--bytes", "1Gi", "-o", "xml"}, 2, `error: unknown output format "xml": use -o text|json|junit`},
	} {
		res := h.Run(c.args...)
		wantOneLineError(t, res, c.code)
		if res.Stderr != c.line+"\n" {
			t.Errorf("%v: got %q, want %q", c.args, res.Stderr, c.line)
		}
	}
}
