package cmdutil

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// Options is kubectl's command pattern: fill in defaults, check, act.
type Options interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(cmd *cobra.Command) error
}

// RunOptions drives o through Complete, Validate and Run. Complete and Validate errors that do
// not carry an exit code are usage errors; Run errors that do not are API errors.
func RunOptions(o Options, cmd *cobra.Command, args []string) error {
	return RunOptionsOr(o, cmd, args, nil)
}

// RunOptionsOr is RunOptions with gh's test seam: when runF is set, it gets the completed and
// validated options instead of Run, so a test of the flags checks what they parse to and runs
// nothing. Commands take runF in NewCmd(f, runF); the root passes nil.
func RunOptionsOr[O Options](o O, cmd *cobra.Command, args []string, runF func(O) error) error {
	if err := o.Complete(cmd, args); err != nil {
		return asCode(err, exit.Usage)
	}
	if err := o.Validate(); err != nil {
		return asCode(err, exit.Usage)
	}
	if runF != nil {
		return runF(o)
	}
	return asCode(o.Run(cmd), exit.API)
}

func asCode(err error, code int) error {
	if err == nil || exit.Has(err) {
		return err
	}
	return &exit.Error{Code: code, Err: err}
}

// Context is the command's context, or Background when the command runs outside Execute (as in
// tests that call RunE directly).
func Context(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
