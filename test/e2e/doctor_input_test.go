package e2e

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Bad input: one line naming the problem and the fix, the documented exit code, no stack trace.
func TestDoctorBadInput(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("here", nil)

	// A kubeconfig whose server is a loopback port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	dead := filepath.Join(dir, "dead.kubeconfig")
	server := "https://127.0.0.1:" + strconv.Itoa(closed)
	writeFile(t, dead, `apiVersion: v1
kind: Config
clusters: [{name: dead, cluster: {server: "`+server+`", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: dead, context: {cluster: dead, user: u, namespace: default}}]
current-context: dead
`)
	garbage := filepath.Join(dir, "garbage.kubeconfig")
	writeFile(t, garbage, "this: is: not: a kubeconfig\n")

	cases := []struct {
		name  string
		res   Result
		code  int
		parts []string
	}{
		{"unreachable cluster", h.exec(env.bin, []string{"doctor", "--kubeconfig", dead}, nil), 3,
			[]string{"cannot reach the cluster at " + server, "connection refused", "check --kubeconfig and --context"}},
		{"kubeconfig that does not parse", h.exec(env.bin, []string{"doctor", "--kubeconfig", garbage}, nil), 3,
			[]string{"cannot load a cluster configuration", "pass --kubeconfig or set KUBECONFIG"}},
		{"kubeconfig that does not exist", h.exec(env.bin, []string{"doctor", "--kubeconfig", filepath.Join(dir, "missing")}, nil), 3,
			[]string{"missing", "--kubeconfig"}},
		{"unknown context", h.Run("--context", "nope", "doctor"), 3,
			[]string{`context "nope" is not in the kubeconfig`, "kubectl config get-contexts"}},
		{"unknown context, namespace from the kubeconfig", h.exec(env.bin, []string{"doctor", "--kubeconfig", h.SB.Kubeconfig(), "--context", "nope"}, nil), 3,
			[]string{`context "nope" is not in the kubeconfig`, "kubectl config get-contexts --kubeconfig " + h.SB.Kubeconfig()}},
		{"unknown name", h.Run("doctor", "nope"), 5,
			[]string{`RayCluster, RayService or RayJob "nope" not found in namespace "` + h.NS + `"`, "kubectl get rayclusters,rayservices,rayjobs -n " + h.NS}},
		{"unknown rayservice", h.Run("doctor", "rayservice/here"), 5,
			[]string{`RayService "here" not found in namespace "` + h.NS + `"`, "kubectl get rayservices -n " + h.NS}},
		{"forbidden namespace", h.Run("--as", "nobody", "doctor"), 4,
			[]string{`forbidden: you cannot list rayclusters.ray.io in namespace "` + h.NS + `"`, `ask for RBAC verb "list" on "rayclusters.ray.io"`,
				"kubectl auth can-i list rayclusters.ray.io -n " + h.NS}},
		{"bad -o", h.Run("doctor", "-o", "xml"), 2, []string{`"xml"`, "table", "junit"}},
		{"bad selector", h.Run("doctor", "-l", "team in (ml"), 2, []string{`bad label selector "team in (ml"`, "-l team=ml,env!=dev"}},
		{"bad --fail-on", h.Run("doctor", "--fail-on", "fatal"), 2, []string{`unknown --fail-on "fatal"`, "error|warning|never"}},
		{"bad target kind", h.Run("doctor", "deployment/here"), 2, []string{`cannot check "deployment/here"`, "raycluster/NAME"}},
		{"two names", h.Run("doctor", "a", "b"), 2, []string{"accepts at most 1 arg"}},
		{"bad --ray-timeout", h.Run("doctor", "--ray-timeout", "0s"), 2, []string{"--ray-timeout must be positive", "--ray-timeout 10s"}},
		{"bad --ray-deadline", h.Run("doctor", "--ray-deadline", "-1s"), 2, []string{"--ray-deadline must be positive"}},
		{"bad --ray-parallel", h.Run("doctor", "--ray-parallel", "0"), 2, []string{"--ray-parallel must be 1 or more, not 0"}},
		{"--ray with --watch", h.Run("doctor", "--ray", "--watch"), 2, []string{"--watch follows the Kubernetes objects only", "run doctor --ray without --watch"}},
		{"bad --ray-register-grace", h.Run("doctor", "--ray-register-grace", "-1m"), 2, []string{"--ray-register-grace -1m0s must be positive"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantOneLineError(t, c.res, c.code, c.parts...)
		})
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
