package e2e

import (
	"strings"
	"testing"
)

// doctor explain and --min-severity through the real binary: explain needs no cluster; an
// unknown rule is one line with exit 2; --min-severity warning keeps the v1.1.1 operator's
// operator-outdated warning, --min-severity error hides it.
func TestDoctorExplainAndMinSeverity(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	res := h.RunRaw("doctor", "explain", "head-evicted")
	if res.Code != 0 || !strings.HasPrefix(res.Stdout, "## `head-evicted` (error)\n") || !strings.Contains(res.Stdout, "kuberay #2125") {
		t.Fatalf("explain: %s", res)
	}
	wantOneLineError(t, h.RunRaw("doctor", "explain", "nope"), 2, `unknown rule "nope": use one of head-evicted, `)
	if r := h.Run("doctor", "--min-severity", "warning"); r.Code != 0 || !strings.Contains(r.Stdout, "operator-outdated") {
		t.Errorf("--min-severity warning: %s", r)
	}
	if r := h.Run("doctor", "--min-severity", "error", "--fail-on", "never"); r.Code != 0 || strings.Contains(r.Stdout, "operator-outdated") {
		t.Errorf("--min-severity error: %s", r)
	}
	wantOneLineError(t, h.Run("doctor", "--min-severity", "error", "--fail-on", "warning"), 2, "--fail-on warning would fail on findings --min-severity error hides")
}
