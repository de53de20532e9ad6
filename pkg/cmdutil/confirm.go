package cmdutil

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// Confirmation is what a destructive command asks before acting. Every message is complete:
// Refusal and Declined are returned as they are, with exit code NotConfirmed.
type Confirmation struct {
	// Yes is --yes: act without asking.
	Yes bool
	// Prompt is written to stderr before the answer is read, e.g. "Delete 2 head pods? [y/N]: ".
	Prompt string
	// Refusal is the error when nobody can answer (stdin is not a terminal) and Yes is false;
	// it names --yes.
	Refusal string
	// Declined is the error when the answer is not y or yes; it says nothing was done.
	Declined string
}

// Confirm asks c.Prompt when stdin is a terminal and reads one line; y or yes (any case) goes
// ahead. Without a terminal it refuses, since nobody can answer. nil means go ahead.
func (f *Factory) Confirm(c Confirmation) error {
	if c.Yes {
		return nil
	}
	if !f.StdinIsTerminal() {
		return exit.Errorf(exit.NotConfirmed, "%s", c.Refusal)
	}
	fmt.Fprint(f.IOStreams.ErrOut, c.Prompt)
	line, _ := bufio.NewReader(f.IOStreams.In).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return exit.Errorf(exit.NotConfirmed, "%s", c.Declined)
}
