package chaos

import (
	"errors"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// exitError renders a core error's message with each setting in it shown as its flag; the exit
// code comes from its kind, as for every core error (pkg/exit). Other errors pass through.
func exitError(err error, flag func(fault.Field) string) error {
	var ce *fault.Error
	if err == nil || !errors.As(err, &ce) {
		return err
	}
	return exit.Errorf(exit.CodeOf(ce), "%s", ce.Text(flag))
}

// flagOf is a setting's flag when both have the same name.
func flagOf(s fault.Field) string { return exit.Flag(s) }
