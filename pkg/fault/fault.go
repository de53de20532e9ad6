// Package fault names what kind of failure an error is, so core packages (pkg/kube, the chaos
// runners) can say "forbidden" or "not found" without knowing the CLI. pkg/exit maps each kind
// to its exit code at the edge; this package imports nothing of the project.
package fault

import (
	"errors"
	"fmt"
)

// Kind is what kind of failure an error is. The zero Kind means none was said.
type Kind int

const (
	// API: the cluster could not be reached or answered with an error, including KubeRay's
	// resource definitions missing.
	API Kind = iota + 1
	// Forbidden: RBAC or admission refused a request.
	Forbidden
	// NotFound: a named object does not exist.
	NotFound
	// Invalid: what was asked cannot be done as asked (an unknown mode, a namespace that does
	// not exist); the message names the fix.
	Invalid
)

// Error is a one-line message meant for a person, with its Kind.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an error of kind k.
func Errorf(k Kind, format string, a ...any) error {
	return &Error{Kind: k, Err: fmt.Errorf(format, a...)}
}

// KindOf is the Kind of the first *Error in err's chain, or 0.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}
