package doctor_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/golden"
)

// --min-severity hides the findings below it, in every format; health and the exit code still
// come from every finding.
func TestMinSeverity(t *testing.T) {
	r := run(t, "scene", nil, "-n", "ml", "--min-severity", "warning")
	if r.code != exit.CheckFailed || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	golden.Assert(t, filepath.Join("testdata", "scene-min-severity-warning.golden"), []byte(r.stdout))
	if strings.Contains(r.stdout, "gcs-ft-off") || !strings.Contains(r.stdout, "serve-head-in-service") {
		t.Errorf("info shown or warning hidden:\n%s", r.stdout)
	}
	e := run(t, "scene", nil, "-n", "ml", "--min-severity", "error", "-o", "json")
	if strings.Contains(e.stdout, `"severity": "warning"`) || !strings.Contains(e.stdout, `"rule": "head-evicted"`) || e.code != exit.CheckFailed {
		t.Errorf("-o json --min-severity error: exit %d\n%s", e.code, e.stdout)
	}
	for _, c := range []struct {
		args []string
		line string
	}{
		{[]string{"--min-severity", "debug"}, "error: unknown --min-severity \"debug\": use --min-severity info|warning|error\n"},
		{[]string{"--min-severity", "error", "--fail-on", "warning"},
			"error: --fail-on warning would fail on findings --min-severity error hides: raise --fail-on to error, or lower --min-severity\n"},
	} {
		r := run(t, "scene", nil, append([]string{"-n", "ml"}, c.args...)...)
		if r.code != exit.Usage || r.stderr != c.line || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.line)
		}
	}
}
