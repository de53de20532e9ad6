package chaos

import (
	"errors"

	corechaos "github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// exitError renders a core error's message with each setting in it shown as its flag; the exit
// code comes from its kind, as for every core error (pkg/exit). Other errors pass through.
func exitError(err error, flag func(corechaos.Setting) string) error {
	var ce *corechaos.Error
	if err == nil || !errors.As(err, &ce) {
		return err
	}
	return exit.Errorf(exit.CodeOf(ce), "%s", ce.Text(flag))
}

// flagOf is a setting's flag when both have the same name.
func flagOf(s corechaos.Setting) string { return exit.Flag(s) }
