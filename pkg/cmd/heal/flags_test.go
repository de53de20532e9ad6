package heal

import (
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/cmdtest"
)

func TestWorkersFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "4"}, "--workers applies only to --watch; a one-shot heal deletes its plan in order"},
		{[]string{"--watch", "--yes", "--workers", "0"}, "--workers must be between 1 and 64, e.g. --workers 8"},
		{[]string{"--watch", "--yes", "--workers", "65"}, "--workers must be between 1 and 64, e.g. --workers 8"},
	} {
		o, err := cmdtest.Parse(t, NewCmd, tc.args...)
		if o != nil || exit.CodeOf(err) != exit.Usage || err.Error() != tc.want {
			t.Errorf("%v: err = %v (code %d), want %q", tc.args, err, exit.CodeOf(err), tc.want)
		}
	}
	if o, err := cmdtest.Parse(t, NewCmd, "--watch", "--yes", "--workers", "8"); err != nil || o.workers != 8 || !o.given.workers {
		t.Errorf("--watch --yes --workers 8: err %v, options %+v", err, o)
	}
}

// Complete records what was given, so a default given explicitly is judged as given.
func TestGivenFlagsAreRecorded(t *testing.T) {
	o, err := cmdtest.Parse(t, NewCmd, "-A", "--wait=true", "--timeout", "5m", "--evidence-dir", "ev", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !o.given.wait || !o.given.timeout || !o.given.evidenceDir || o.given.minAge || o.output.Value != cmdutil.FormatJSON {
		t.Errorf("options %+v", o)
	}
	if _, err := cmdtest.Parse(t, NewCmd, "-A", "--watch", "--yes", "--wait=true"); exit.CodeOf(err) != exit.Usage {
		t.Errorf("--watch --wait=true: %v", err)
	}
}
