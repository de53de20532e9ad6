package bundle

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/cmdtest"
)

// parse runs bundle with args up to Validate and returns the options Run would have had.
func parse(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	var got *Options
	err := cmdtest.Run(t, func(f *cmdutil.Factory) *cobra.Command {
		return NewCmd(f, func(o *Options) error { got = o; return nil })
	}, args...)
	return got, err
}

// --ray reads every cluster's dashboard, --ray=false none, and unset only a named one's
// (TestBundleAsksRayAsDoctorDoes checks what the archive keeps).
func TestRayFlagParses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"sec"}, true},
		{[]string{"sec", "--ray=false"}, false},
		{nil, false},
		{[]string{"--ray"}, true},
	} {
		o, err := parse(t, append([]string{"-n", "ml", "-o", "b.tar.gz"}, tc.args...)...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if o.readRay != tc.want {
			t.Errorf("bundle %v reads Ray: %v, want %v", tc.args, o.readRay, tc.want)
		}
	}
}
