// Package fault names what kind of failure an error is, so core packages (pkg/kube, the chaos
// runners, pkg/repair) can say "forbidden" or "not found" without knowing the CLI. pkg/exit maps
// each kind to its exit code at the edge; this package imports nothing of the project.
package fault

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Kind is what kind of failure an error is. The zero Kind means none was said.
type Kind int

const (
	// API: the cluster could not be reached or answered with an error, including KubeRay's
	// resource definitions missing, or refused or failed an operation a run needed.
	API Kind = iota + 1
	// Forbidden: RBAC or admission refused a request.
	Forbidden
	// NotFound: a named object, or something a run needs (a head, ready endpoints), does not
	// exist.
	NotFound
	// Invalid: what was asked cannot be done as asked (an unknown mode, a namespace that does
	// not exist, settings that contradict each other, a target that is refused); the message
	// names the fix. Nothing was changed.
	Invalid
	// Interrupted: the run was canceled (Ctrl-C) before it finished.
	Interrupted
)

// Field names one input of a core function (a chaos experiment's setting, say) in a message. The
// command shows it as the flag that set it, so the core never spells a flag.
type Field string

// Error is a one-line message meant for a person, with its Kind. It keeps its format and
// arguments so a command can render each Field argument as its own flag name (Text).
type Error struct {
	Kind   Kind
	format string
	args   []any
}

// Errorf returns an error of kind k. %w works as in fmt.Errorf; Field arguments print as their
// own names unless a command renders them with Text.
func Errorf(k Kind, format string, a ...any) *Error {
	return &Error{Kind: k, format: format, args: a}
}

// Error shows fields by their own names.
func (e *Error) Error() string { return e.Text(func(f Field) string { return string(f) }) }

// Text renders the message with each Field argument shown as name returns it.
func (e *Error) Text(name func(Field) string) string {
	args := slices.Clone(e.args)
	for i, a := range args {
		if f, ok := a.(Field); ok {
			args[i] = name(f)
		}
	}
	return fmt.Errorf(e.format, args...).Error()
}

// Unwrap is the first error among the arguments, if any: the cause a message quotes.
func (e *Error) Unwrap() error {
	for _, a := range e.args {
		if err, ok := a.(error); ok {
			return err
		}
	}
	return nil
}

// KindOf is the Kind of the first *Error in err's chain, or 0.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// Render is err's message with the Field arguments of its first *Error shown as name returns
// them, wherever that Error sits in the chain (a command wrapping a core error keeps its words).
func Render(err error, name func(Field) string) string {
	msg := err.Error()
	var e *Error
	if errors.As(err, &e) {
		msg = strings.Replace(msg, e.Error(), e.Text(name), 1)
	}
	return msg
}
