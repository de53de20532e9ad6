package chaos

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	corechaos "github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// What the commands of the experiments run under the probe (head-kill, drain, worker-kill,
// upgrade) share: the flags of experiment.ProbeSettings that read the same on each, the run with
// its hooks, and the exit code of its outcome.

// addProbeFlags binds the probe's flags whose help is the same on every command; each command
// binds --path, --header, --warmup, --request-timeout and --dry-run with its own words.
func addProbeFlags(fl *pflag.FlagSet, p *experiment.ProbeSettings) {
	fl.StringVar(&p.Method, "method", http.MethodGet, "Request method")
	fl.StringVar(&p.Rate, "rate", "50/s", "Requests per second, e.g. 50/s, 50 or 600/m")
	fl.Int64Var(&p.MaxErrors, "max-errors", 0, "SLO: at most this many failed requests")
	fl.Float64Var(&p.MinAvailability, "min-availability", 0, "SLO: at least this percentage of requests succeed, e.g. 99.9")
	fl.DurationVar(&p.ProgressEvery, "progress-interval", 5*time.Second, "How often to print a progress line when stderr is not a terminal")
}

// completeProbeFlags records which of the SLO's flags were given: 0 is a limit too.
func completeProbeFlags(cmd *cobra.Command, p *experiment.ProbeSettings) {
	p.MaxErrorsSet = cmd.Flags().Changed("max-errors")
	p.MinAvailabilitySet = cmd.Flags().Changed("min-availability")
}

// inNamespace sets ns to the namespace the command acts in (--namespace, else the context's).
func inNamespace(f *cmdutil.Factory, ns *string) error {
	n, err := f.Namespace()
	if err != nil {
		return err
	}
	*ns = n
	return nil
}

// validateOutput checks -o, and that a dry run is not asked for JUnit (noJUnit says why and what
// to use). It is pure: whether --report-html can be written is found at the start of the run.
func validateOutput(output *cmdutil.OutputFlag, dryRun bool, noJUnit string) error {
	if err := output.Validate(); err != nil {
		return err
	}
	if dryRun && output.Value == "junit" {
		return exit.Usagef("%s", noJUnit)
	}
	return nil
}

// hookProbe sets the run's hooks: the progress line on stderr, Ctrl-C, and the confirmation
// (undone is the line after a "no"). The caller ends the progress line with done once the run
// returns.
func hookProbe(f *cmdutil.Factory, p *experiment.ProbeSettings, yes bool, undone string) *progress {
	errOut := f.IOStreams.ErrOut
	prog := newProgress(errOut, cmdutil.IsTerminal(errOut), p.ProgressEvery)
	p.Progress, p.ProgressEvery, p.Interrupts = prog.update, prog.every, signalContext
	p.Confirm = confirmation{f: f, yes: yes,
		refusal:  "refusing to %s without --yes: pass --yes, or run in a terminal to confirm (--dry-run shows the plan)",
		declined: undone}.ask
	return prog
}

// writePlan prints the plan of a dry run, which the API server judged first (a refused step
// leaves stdout empty): -o json as JSON, else as text.
func writePlan[P any](out io.Writer, output *cmdutil.OutputFlag, plan P, err error, text func(io.Writer, P) error) error {
	if err != nil {
		return exitError(err, flagOf)
	}
	return output.Print(out, dryRunPlan[P]{plan: plan, text: text})
}

// outcomeExit is the exit of a run whose report was printed: an unfinished run first
// (interrupted, a failed warm-up, a refused step), then the outcome, whose note goes to errOut.
func outcomeExit(errOut io.Writer, runErr error, outcome corechaos.Outcome, flag func(fault.Field) string) error {
	if err := exitError(runErr, flag); err != nil {
		return err
	}
	if outcome.Passed {
		return nil
	}
	if outcome.Note != nil {
		fmt.Fprintln(errOut, outcome.Note.Text(flag))
	}
	return exit.Silent{Code: exit.CheckFailed}
}

// probed is the Run of an experiment under the probe: the plan with --dry-run, else the run
// with its hooks, its report on stdout (and, if asked, as an HTML page) and the exit code of its
// outcome.
type probed[P any, R comparable] struct {
	p      *experiment.ProbeSettings
	output *cmdutil.OutputFlag
	yes    bool
	undone string // the line after a "no"

	dryRun   func(context.Context, *kube.Clients) (P, error)
	planText func(io.Writer, P) error
	run      func(context.Context, *kube.Clients) (R, corechaos.Outcome, error)
	text     func(io.Writer, R, bool) error // the report for a person; colored on a terminal
	junit    func(io.Writer, R) error       // nil: -o offers no junit

	reportHTML string                   // --report-html, "" when not asked (or not offered)
	html       func(io.Writer, R) error // the page
}

// probedRun runs x. A report file that cannot be written is refused first, before anything is
// read or changed: found after the run, it would turn a finished run into an error.
func probedRun[P any, R comparable](f *cmdutil.Factory, cmd *cobra.Command, x probed[P, R]) error {
	if err := reportHTMLWritable(x.reportHTML); err != nil {
		return err
	}
	ctx := cmdutil.Context(cmd)
	c, err := f.Clients()
	if err != nil {
		return err
	}
	errOut := f.IOStreams.ErrOut
	x.p.Now, x.p.Warn = f.Now, errOut
	if x.p.DryRun {
		plan, err := x.dryRun(ctx, c)
		return writePlan(f.IOStreams.Out, x.output, plan, err, x.planText)
	}
	prog := hookProbe(f, x.p, x.yes, x.undone)
	r, outcome, runErr := x.run(ctx, c)
	prog.done()
	var none R // the run ended before the probe: no report
	if r == none {
		return exitError(runErr, flagOf)
	}
	if err := x.output.Print(f.IOStreams.Out, probedReport[R]{r: r, color: f.Color(), text: x.text, junit: x.junit}); err != nil {
		return err
	}
	verdict := outcomeExit(errOut, runErr, outcome, flagOf)
	if x.html == nil {
		return verdict
	}
	return withHTML(f, x.reportHTML, verdict, func(w io.Writer) error { return x.html(w, r) })
}
