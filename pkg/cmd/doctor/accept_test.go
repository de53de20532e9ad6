package doctor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	kfake "k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// A KUBECTL_RAY_ACCEPT in the developer's environment must not change these tests' outputs.
func init() { os.Unsetenv("KUBECTL_RAY_ACCEPT") }

// Accepted findings are reported apart in every format and never fail the run; expired and
// stale entries are warned about with file:line.
func TestAcceptOutputs(t *testing.T) {
	assertOutputs(t, []outputCase{
		{"accept-table", []string{"-n", "ml"}, exit.OK},
		{"accept-wide", []string{"-n", "ml", "-o", "wide"}, exit.OK},
		{"accept-json", []string{"-n", "ml", "-o", "json"}, exit.OK},
		{"accept-junit", []string{"-n", "ml", "-o", "junit"}, exit.OK},
		// Warnings not accepted (node-pressure, the expired serve entry) still fail --fail-on warning.
		{"accept-fail-on-warning", []string{"-n", "ml", "--fail-on", "warning"}, exit.CheckFailed},
	}, "accept-stderr.golden", "--accept", "testdata/accept.yaml")
}

// Without --accept, $KUBECTL_RAY_ACCEPT names the files, else ./.kubectl-ray-accept.yaml.
func TestAcceptFromEnvironmentAndDefault(t *testing.T) {
	abs, err := filepath.Abs("testdata/accept.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECTL_RAY_ACCEPT", abs)
	if r := run(t, "scene", nil, "-n", "ml"); r.code != exit.OK || !strings.Contains(r.stdout, "Accepted (reported, not counted toward --fail-on)") {
		t.Errorf("$KUBECTL_RAY_ACCEPT: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Setenv("KUBECTL_RAY_ACCEPT", "")
	data, err := os.ReadFile(abs)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	scene, err := os.ReadFile("testdata/scene.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "testdata", "scene.yaml"), scene, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if r := run(t, "scene", nil, "-n", "ml"); r.code != exit.CheckFailed {
		t.Errorf("no file: want exit 1 from the evicted head, got %d", r.code)
	}
	if err := os.WriteFile(".kubectl-ray-accept.yaml", data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "scene", nil, "-n", "ml")
	if r.code != exit.OK || !strings.Contains(r.stderr, "warning: .kubectl-ray-accept.yaml:14: accepted serve-head-in-service on cluster ml/svc-* expired on 2025-05-01") {
		t.Errorf("default file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A malformed accept file or a bad threshold is one line, exit 2, and doctor reads nothing.
func TestAcceptErrorsRunNothing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: kubectl-ray.io/v1alpha1\nkind: AcceptedFindings\naccept:\n- rules: [head-crashlop]\n  cluster: ml/a\n  reason: r\n  expires: 2025-07-01\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		line string
	}{
		{"unknown rule", []string{"--accept", bad}, "error: " + bad + `:4: unknown rule "head-crashlop"; rule IDs are listed in docs/rules.md (e.g. head-crashloop)`},
		{"missing file", []string{"--accept", filepath.Join(dir, "nope.yaml")}, "error: " + filepath.Join(dir, "nope.yaml") + ": cannot read the accept file named by --accept: no such file; check the path"},
		{"negative threshold", []string{"--pending-too-long", "-5m"}, "error: --pending-too-long -5m0s must be positive, e.g. 90s, 5m or 1h"},
		{"zero threshold", []string{"--operator-grace", "0"}, "error: --operator-grace 0s must be positive, e.g. 90s, 5m or 1h"},
		{"unparsable threshold", []string{"--recent-oom", "an hour"}, `error: invalid argument "an hour" for "--recent-oom" flag: time: invalid duration "an hour"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var kc *kfake.Clientset
			var rc *rayfake.Clientset
			r := run(t, "scene", func(k *kfake.Clientset, ray *rayfake.Clientset) { kc, rc = k, ray }, append([]string{"-n", "ml"}, tc.args...)...)
			if r.code != exit.Usage || r.stdout != "" || !strings.HasPrefix(r.stderr, tc.line) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line starting %q", r.code, r.stdout, r.stderr, tc.line)
			}
			if n := len(kc.Actions()) + len(rc.Actions()); n != 0 {
				t.Errorf("%d API calls after a usage error: %v %v", n, kc.Actions(), rc.Actions())
			}
		})
	}
}
