package exit

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// The core says what went wrong; the exit code is decided here, and never renumbered.
func TestCodeOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
		has  bool
	}{
		{nil, OK, false},
		{errors.New("plain"), API, false},
		{Silent{Code: CheckFailed}, CheckFailed, true},
		{Usagef("bad"), Usage, true},
		{fault.Errorf(fault.API, "down"), API, true},
		{fault.Errorf(fault.Forbidden, "no"), Forbidden, true},
		{fmt.Errorf("wrapped: %w", fault.Errorf(fault.NotFound, "gone")), NotFound, true},
		{fault.Errorf(fault.Invalid, "unknown mode"), Usage, true},
		// An exit code chosen at the edge wins over the fault underneath.
		{&Error{Code: CheckFailed, Err: fault.Errorf(fault.Forbidden, "no")}, CheckFailed, true},
	} {
		if got := CodeOf(tc.err); got != tc.code || Has(tc.err) != tc.has {
			t.Errorf("CodeOf(%v) = %d, Has %v; want %d, %v", tc.err, got, Has(tc.err), tc.code, tc.has)
		}
	}
}

func TestCoreKindsMapToExitCodes(t *testing.T) {
	for kind, want := range map[fault.Kind]int{fault.API: API, fault.Forbidden: Forbidden, fault.NotFound: NotFound, fault.Invalid: Usage, fault.Interrupted: Interrupted} {
		if got := CodeOf(fault.Errorf(kind, "x")); got != want {
			t.Errorf("kind %d: exit %d, want %d", kind, got, want)
		}
	}
}
