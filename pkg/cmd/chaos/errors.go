package chaos

import (
	"errors"

	corechaos "github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// exitCodes are the exit codes of the runners' error kinds (docs/exit-codes.md).
var exitCodes = map[corechaos.ErrorKind]int{
	corechaos.Invalid:     exit.Usage,
	corechaos.NotFound:    exit.NotFound,
	corechaos.Failed:      exit.API,
	corechaos.Interrupted: exit.Interrupted,
}

// exitError gives a runner's error its exit code, each setting in it shown as its flag. API
// errors from pkg/kube already carry theirs and pass through.
func exitError(err error, flag func(corechaos.Setting) string) error {
	var ce *corechaos.Error
	if err == nil || !errors.As(err, &ce) {
		return err
	}
	return exit.Errorf(exitCodes[ce.Kind], "%s", ce.Text(flag))
}

// flagOf is a setting's flag when both have the same name.
func flagOf(s corechaos.Setting) string { return "--" + string(s) }
