package chaos

import (
	"context"
	"strings"
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// TestUpgradeBadFlags: every bad flag is refused with one line and exit 2 before the API is called.
func TestUpgradeBadFlags(t *testing.T) {
	u := []string{"rayservice/demo", "--image", "rayproject/ray:2.47.0"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rayservice/demo"}, "say what to change: --image IMAGE or --patch JSON-MERGE-PATCH"},
		{append(u, "--patch", `{"spec":{}}`), "--image and --patch exclude each other"},
		{[]string{"rayservice/demo", "--patch", "not json"}, "--patch is not a JSON object"},
		{[]string{"demo-cluster", "--image", "x"}, "name a RayService as rayservice/NAME"},
		{[]string{"raycluster/demo", "--image", "x"}, "name a RayService as rayservice/NAME"},
		{append(u, "--rate", "0"), `--rate "0" is not positive`},
		{append(u, "--warmup", "0s"), "--warmup must be positive"},
		{append(u, "--timeout", "10s"), "--timeout 10s leaves no time after the patch"},
		{append(u, "--max-errors", "-1"), "--max-errors must be 0 or more"},
		{append(u, "--min-availability", "101"), "percentage from 0 to 100"},
		{append(u, "--header", "nocolon"), "--header number 1 is not K:V"},
		{append(u, "-o", "junit"), `unknown output format "junit"`},
	} {
		k, r := hkObjects()
		h := newHKHarness(t, k, r)
		cmd := NewUpgradeCmd(h.f)
		cmd.SetArgs(c.args)
		cmd.SetOut(h.out)
		cmd.SetErr(h.errOut)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		err := cmd.ExecuteContext(context.Background())
		if exit.CodeOf(err) != exit.Usage || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: want a one-line usage error with %q, got %d: %v", c.args, c.want, exit.CodeOf(err), err)
		}
		if n := len(h.kube.Actions()) + len(h.ray.Actions()); n != 0 {
			t.Errorf("%v: %d API calls before the flags were checked", c.args, n)
		}
	}
}
