// Package chaos is what every experiment shares. An experiment (headkill, pressure) is a core
// runner: it reads and changes the cluster through a small interface, and returns a report, an
// outcome and a plain error. The command maps the error's Kind to an exit code and each Setting
// named in a message to its flag; nothing here knows about either.
package chaos

import "github.com/kubectl-ray/kubectl-ray/pkg/fault"

// Setting names one input of an experiment, as its Settings call it. Messages carry it as an
// argument, so the command can show it as the flag that set it.
type Setting = fault.Field

// ErrorKind says what went wrong, so the command can pick an exit code. The runners' errors are
// pkg/fault's, the kinds every core package uses; these names read well in the runners.
type ErrorKind = fault.Kind

const (
	// Invalid: the settings ask for something impossible, or the target is refused (not a Ray
	// pod, kube-system, not running). Nothing was changed.
	Invalid = fault.Invalid
	// NotFound: the target, or something the run needs (a head, ready endpoints), does not exist.
	NotFound = fault.NotFound
	// Failed: the cluster refused or failed an operation the run needed.
	Failed = fault.API
	// Interrupted: the run was canceled (Ctrl-C); what was seen is in the report.
	Interrupted = fault.Interrupted
)

// Error is a one-line message meant for a person, with a kind.
type Error = fault.Error

// Errorf is an Error; Setting arguments are shown by the command as their flags.
func Errorf(kind ErrorKind, format string, args ...any) *Error {
	return fault.Errorf(kind, format, args...)
}

// KindOf is err's kind, or 0 when err carries none.
func KindOf(err error) ErrorKind { return fault.KindOf(err) }

// Outcome is what a finished experiment concluded. A run that could not conclude (bad input, a
// refused kill, Ctrl-C) returns an error instead.
type Outcome struct {
	// Passed: the SLO held, or the cluster came back.
	Passed bool
	// Note, when set, says why it did not pass beyond what the report shows (e.g. not recovered
	// in time); the command prints it after the report.
	Note *Error
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
