// Package exit defines the process exit codes and the one-line errors that carry them.
package exit

import (
	"errors"
	"fmt"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// Exit codes are part of the interface: CI scripts branch on them. docs/exit-codes.md lists them;
// never renumber one.
const (
	// OK: the command did what was asked and nothing reached the failure threshold.
	OK = 0
	// CheckFailed: the command ran, and what it checked failed: a doctor finding at or above
	// --fail-on, a chaos SLO not held, a heal that did not finish.
	CheckFailed = 1
	// Usage: bad flags, arguments or flag combinations.
	Usage = 2
	// API: the cluster could not be reached or answered with an error (including missing KubeRay CRDs).
	API = 3
	// Forbidden: RBAC refused a request the command needs.
	Forbidden = 4
	// NotFound: a named object does not exist.
	NotFound = 5
	// NotConfirmed: a destructive action was not confirmed (no --yes and no terminal, or the user said no).
	NotConfirmed = 6
	// Interrupted: stopped by a signal before it finished.
	Interrupted = 130
)

// Error carries an exit code with a one-line message meant for a person.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an error that makes the process exit with code.
func Errorf(code int, format string, a ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, a...)}
}

// Usagef is an Usage error: the message must name the problem and the fix.
func Usagef(format string, a ...any) error { return Errorf(Usage, format, a...) }

// Silent marks an outcome whose report was already printed: exit with code, print nothing more.
type Silent struct{ Code int }

func (s Silent) Error() string { return fmt.Sprintf("exit status %d", s.Code) }

// CodeOf maps any error to the exit code the process should return.
func CodeOf(err error) int {
	if err == nil {
		return OK
	}
	var s Silent
	if errors.As(err, &s) {
		return s.Code
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if code, ok := faultCodes[fault.KindOf(err)]; ok {
		return code
	}
	return API
}

// faultCodes maps what core packages say went wrong (pkg/fault) to exit codes: the core never
// picks an exit code itself.
var faultCodes = map[fault.Kind]int{
	fault.API:         API,
	fault.Forbidden:   Forbidden,
	fault.NotFound:    NotFound,
	fault.Invalid:     Usage,
	fault.Interrupted: Interrupted,
}

// Has reports whether err already carries an exit code, or a fault.Kind that maps to one.
func Has(err error) bool {
	var s Silent
	var e *Error
	return errors.As(err, &s) || errors.As(err, &e) || fault.KindOf(err) != 0
}

// Flag is how every command shows a core package's fault.Field: as the flag that sets it.
func Flag(f fault.Field) string { return "--" + string(f) }

// Message is err as the command prints it: each fault.Field shown as its flag.
func Message(err error) string { return fault.Render(err, Flag) }
