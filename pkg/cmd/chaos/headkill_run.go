package chaos

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	corechaos "github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/headkill"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/load"
)

// Validate checks every flag before the API is touched: bad input kills nothing.
func (o *HeadKillOptions) Validate() error {
	if err := validateOutput(o.output, o.s.DryRun, "--dry-run prints a plan, which has no SLO result for JUnit: use -o text or -o json"); err != nil {
		return err
	}
	s := o.s // the runner validates again with what it resolves
	return exitError(s.Validate(), flagOf)
}

// Run runs the head kill, prints its report (and its HTML page) and maps the outcome to the exit
// code; doctor's advice for the report is read once the kill's dry run was accepted.
func (o *HeadKillOptions) Run(cmd *cobra.Command) error {
	return probedRun(o.f, cmd, probed[*headkill.Plan, *headkill.Report]{p: &o.s.ProbeSettings, output: o.output, yes: o.yes, undone: "not confirmed: nothing was killed",
		dryRun: func(ctx context.Context, c *kube.Clients) (*headkill.Plan, error) {
			return headkill.DryRun(ctx, load.API{Clients: c}, o.s)
		},
		planText: headkill.WritePlanText,
		run: func(ctx context.Context, c *kube.Clients) (*headkill.Report, corechaos.Outcome, error) {
			api := load.API{Clients: c}
			o.s.Doctor = headKillDoctor(api, &o.s)
			return headkill.Run(ctx, api, o.s)
		},
		text:       headkill.WriteText,
		junit:      headkill.WriteJUnit,
		reportHTML: o.reportHTML, html: headkill.WriteHTML})
}

// signalContext ends on Ctrl-C, SIGTERM or SIGHUP (the terminal of a 3 a.m. ssh session
// closed): each ends the run the same way, with its clean-up (a drain's uncordon); tests
// replace it.
var signalContext = func(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}

// progress prints one live line on a terminal, a plain line every `every` otherwise.
type progress struct {
	w     io.Writer
	tty   bool
	every time.Duration
	last  string
}

func newProgress(w io.Writer, tty bool, every time.Duration) *progress {
	p := &progress{w: w, tty: tty, every: every}
	if tty {
		p.every = 200 * time.Millisecond
	}
	return p
}

func (p *progress) update(l probe.Live, head string) {
	line := fmt.Sprintf("%s; %s", l, head)
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	} else if line != p.last {
		fmt.Fprintln(p.w, line)
	}
	p.last = line
}

func (p *progress) done() {
	if p.tty && p.last != "" {
		fmt.Fprintln(p.w)
	}
}
