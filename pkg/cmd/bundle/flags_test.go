package bundle

import (
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/internal/cmdtest"
)

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
		o, err := cmdtest.Parse(t, NewCmd, append([]string{"-n", "ml", "-o", "b.tar.gz"}, tc.args...)...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if o.readRay != tc.want {
			t.Errorf("bundle %v reads Ray: %v, want %v", tc.args, o.readRay, tc.want)
		}
	}
}
