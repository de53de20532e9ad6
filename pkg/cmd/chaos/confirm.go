package chaos

import (
	"fmt"

	corechaos "github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
)

// confirmation turns a runner's question into the shared prompter's (Factory.Confirm): on a
// terminal it asks, anywhere else it refuses without --yes.
type confirmation struct {
	f   *cmdutil.Factory
	yes bool
	// refusal is a format of the action, the line without a terminal; note follows the question;
	// declined is the line after a "no".
	refusal, note, declined string
}

// A warning is shown with the question (the runner also prints it once the action is done, for
// the record and for --yes, which skips the question). A refusal stays the one error line.
func (c confirmation) ask(q corechaos.Confirmation) error {
	question := "This will " + q.Action
	if q.While != "" {
		question += " while " + q.While
	}
	warning := ""
	if q.Warning != "" {
		warning = "Warning: " + q.Warning + "\n"
	}
	return c.f.Confirm(cmdutil.Confirmation{Yes: c.yes, Prompt: question + ".\n" + warning + c.note + "Continue? [y/N] ",
		Refusal: fmt.Sprintf(c.refusal, q.Action), Declined: c.declined})
}
