// Package cmdutil is what every command shares: the client factory, the Options runner,
// terminal and color decisions.
package cmdutil

import (
	"io"
	"os"
	"strconv"
	"time"

	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// Factory hands commands their clients and streams, so tests can swap both.
type Factory struct {
	ConfigFlags *genericclioptions.ConfigFlags
	IOStreams   genericiooptions.IOStreams
	// NoColor is the --no-color flag.
	NoColor bool
	// Now is the clock; tests pin it.
	Now func() time.Time

	// Width, when set, answers TerminalWidth: tests play a terminal of a given size.
	Width func() int

	// StdinTerminal, when set, answers StdinIsTerminal: tests play a person at a terminal.
	StdinTerminal func() bool

	// NewClients builds clients; tests replace it with fakes.
	NewClients func(*genericclioptions.ConfigFlags) (*kube.Clients, error)
	clients    *kube.Clients
}

// NewFactory returns a Factory over kubectl's config flags and the process streams.
func NewFactory(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *Factory {
	return &Factory{ConfigFlags: flags, IOStreams: streams, Now: time.Now, NewClients: kube.NewClients}
}

// Clients returns the API clients, built once.
func (f *Factory) Clients() (*kube.Clients, error) {
	if f.clients != nil {
		return f.clients, nil
	}
	c, err := f.NewClients(f.ConfigFlags)
	if err != nil {
		return nil, err
	}
	f.clients = c
	return c, nil
}

// Namespace is -n, or the kubeconfig context's namespace, or "default".
func (f *Factory) Namespace() (string, error) {
	ns, _, err := f.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		// The namespace comes from the kubeconfig, so this fails for any broken kubeconfig or
		// unknown --context, where -n is not the fix: report the kubeconfig's own error.
		if _, cerr := f.Clients(); cerr != nil {
			return "", cerr
		}
		return "", exit.Errorf(exit.API, "cannot read the namespace from the kubeconfig: %v; pass -n NAMESPACE or fix --kubeconfig", err)
	}
	return ns, nil
}

// IsTerminal reports whether w is a terminal (tables get headers, colors and live lines only then).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// TerminalWidth is the width tables fit to: 0 (no limit) unless stdout is a terminal, so piped
// output never changes with the window; on a terminal, COLUMNS when set to a number, else the
// terminal's own width.
func (f *Factory) TerminalWidth() int {
	if f.Width != nil {
		return f.Width()
	}
	out, ok := f.IOStreams.Out.(*os.File)
	if !ok || !term.IsTerminal(int(out.Fd())) {
		return 0
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if w, _, err := term.GetSize(int(out.Fd())); err == nil && w > 0 {
		return w
	}
	return 0
}

// StdinIsTerminal reports whether a person can answer a confirmation prompt.
func (f *Factory) StdinIsTerminal() bool {
	if f.StdinTerminal != nil {
		return f.StdinTerminal()
	}
	r, ok := f.IOStreams.In.(*os.File)
	return ok && term.IsTerminal(int(r.Fd()))
}

// Color reports whether output to stdout may be colored: a terminal, no NO_COLOR, no --no-color.
func (f *Factory) Color() bool {
	if f.NoColor {
		return false
	}
	if _, set := os.LookupEnv("NO_COLOR"); set {
		return false
	}
	return IsTerminal(f.IOStreams.Out)
}
