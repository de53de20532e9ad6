// Package chaos is what every experiment shares. An experiment (headkill, pressure) is a core
// runner: it reads and changes the cluster through a small interface, and returns a report, an
// outcome and a plain error (pkg/fault's). The command maps the error's kind to an exit code and
// each fault.Field named in a message (a setting) to its flag; nothing here knows about either.
package chaos

import "github.com/kubectl-ray/kubectl-ray/pkg/fault"

// Outcome is what a finished experiment concluded. A run that could not conclude (bad input, a
// refused kill, Ctrl-C) returns an error instead.
type Outcome struct {
	// Passed: the SLO held, or the cluster came back.
	Passed bool
	// Note, when set, says why it did not pass beyond what the report shows (e.g. not recovered
	// in time); the command prints it after the report.
	Note *fault.Error
}

// Confirmation is what a runner asks about before its destructive step; the command asks the
// person (or refuses without a terminal).
type Confirmation struct {
	// Action is the step, e.g. "add ephemeral container C to pod NS/P on node N (...)".
	Action string
	// While is what goes on meanwhile, e.g. "probing service/demo-serve-svc:8000 at 50/s"; may be "".
	While string
	// Warning is what else the action may hit, e.g. the other pods of a node put under
	// pressure; may be "". It is shown with the question; the runner prints it again once the
	// action is done (a refused action stays one error line).
	Warning string
}

// Confirm asks; an error stops the run with nothing changed. A nil Confirm means confirmed.
type Confirm func(Confirmation) error

// Ask runs c, if any.
func (c Confirm) Ask(q Confirmation) error {
	if c == nil {
		return nil
	}
	return c(q)
}
