package accept

import (
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// Thresholds: diagnose's defaults, then the accept files, then the flags.
func TestAcceptFlagsThresholdPrecedence(t *testing.T) {
	files := map[string]string{"t.yaml": "apiVersion: kubectl-ray.io/v1alpha1\nkind: AcceptedFindings\nthresholds:\n  pendingTooLong: 20m\n  recentOOM: 2h\n"}
	load := func(args ...string) (time.Duration, time.Duration, time.Duration, error) {
		cmd := &cobra.Command{Use: "x"}
		a := AddFlags(cmd, "accept")
		a.Getenv = func(string) string { return "" }
		a.Exists = func(string) bool { return false }
		a.ReadFile = func(name string) ([]byte, error) {
			if s, ok := files[name]; ok {
				return []byte(s), nil
			}
			return nil, fs.ErrNotExist
		}
		if err := cmd.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		_, o, err := a.Load()
		return o.PendingTooLong, o.RecentOOM, o.OperatorGrace, err
	}
	for _, tc := range []struct {
		args                []string
		pending, oom, grace time.Duration
	}{
		{nil, 5 * time.Minute, time.Hour, 2 * time.Minute},
		{[]string{"--accept", "t.yaml"}, 20 * time.Minute, 2 * time.Hour, 2 * time.Minute},
		{[]string{"--accept", "t.yaml", "--pending-too-long", "30s", "--operator-grace", "10m"}, 30 * time.Second, 2 * time.Hour, 10 * time.Minute},
	} {
		p, oom, g, err := load(tc.args...)
		if err != nil || p != tc.pending || oom != tc.oom || g != tc.grace {
			t.Errorf("%v: pending %s oom %s grace %s (%v), want %s %s %s", tc.args, p, oom, g, err, tc.pending, tc.oom, tc.grace)
		}
	}
	if _, _, _, err := load("--workers-not-ready-window", "-1s"); exit.CodeOf(err) != exit.Usage ||
		!strings.HasPrefix(err.Error(), "--workers-not-ready-window -1s must be positive") {
		t.Errorf("negative flag: %v", err)
	}
}
