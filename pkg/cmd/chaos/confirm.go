package chaos

import (
	"bufio"
	"fmt"
	"strings"

	corechaos "github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// confirmation asks before a destructive step: on a terminal it asks, anywhere else it refuses
// without --yes.
type confirmation struct {
	f   *cmdutil.Factory
	yes bool
	// refusal is a format of the action, the line without a terminal; note follows the question;
	// declined is the line after a "no".
	refusal, note, declined string
}

func (c confirmation) ask(q corechaos.Confirmation) error {
	if c.yes {
		return nil
	}
	if !c.f.StdinIsTerminal() {
		return exit.Errorf(exit.NotConfirmed, c.refusal, q.Action)
	}
	question := "This will " + q.Action
	if q.While != "" {
		question += " while " + q.While
	}
	fmt.Fprintf(c.f.IOStreams.ErrOut, "%s.\n%sContinue? [y/N] ", question, c.note)
	answer, _ := bufio.NewReader(c.f.IOStreams.In).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return exit.Errorf(exit.NotConfirmed, "%s", c.declined)
	}
	return nil
}
