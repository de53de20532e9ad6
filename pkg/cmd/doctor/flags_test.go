package doctor

import (
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/cmdtest"
)

// Without --ray only a named target's dashboard is asked; --ray asks every cluster's, --ray=false
// none (TestRayIsAskedWhenNamedOrAsked checks the port-forwards themselves).
func TestRayFlagParses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"-n", "ml"}, false},
		{[]string{"-n", "ml", "raycluster-b"}, true},
		{[]string{"-n", "ml", "rayservice/svc"}, true},
		{[]string{"-n", "ml", "raycluster-b", "--ray=false"}, false},
		{[]string{"-n", "ml", "--ray"}, true},
	} {
		o, err := cmdtest.Parse(t, NewCmd, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := o.ray.query(o.target) != nil; got != tc.want {
			t.Errorf("doctor %v asks Ray: %v, want %v", tc.args, got, tc.want)
		}
	}
}

func TestRayFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "ml", "--ray-timeout", "0s"}, "--ray-timeout must be positive, e.g. --ray-timeout 10s"},
		{[]string{"-n", "ml", "--ray-deadline", "-1s"}, "--ray-deadline must be positive, e.g. --ray-deadline 60s"},
		{[]string{"-n", "ml", "--ray-parallel", "0"}, "--ray-parallel must be 1 or more, not 0"},
		{[]string{"-n", "ml", "--ray", "--watch"}, "--watch follows the Kubernetes objects only and does not read Ray's dashboards: run doctor --ray without --watch"},
	} {
		o, err := cmdtest.Parse(t, NewCmd, tc.args...)
		if o != nil || exit.CodeOf(err) != exit.Usage || exit.Message(err) != tc.want {
			t.Errorf("doctor %v: err %v (exit %d), want %q", tc.args, err, exit.CodeOf(err), tc.want)
		}
	}
}

func TestOutputFlagParses(t *testing.T) {
	o, err := cmdtest.Parse(t, NewCmd, "-o", "junit", "--fail-on", "warning")
	if err != nil || o.output.Value != cmdutil.FormatJUnit || o.threshold() != "warning" {
		t.Errorf("err %v, options %+v", err, o)
	}
}
