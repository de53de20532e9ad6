package chaos

import (
	"fmt"
	"io"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/pressure"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
)

// The one writer of each document kind the experiments print (cmdutil.Writer): every format
// their -o offers, in one place. Plans have no JUnit (validateOutput refuses it first).

// probedReport is the report of an experiment under the probe (head-kill, drain, worker-kill,
// upgrade): text (colored on a terminal), json, and junit where the experiment writes one.
type probedReport[R any] struct {
	r     R
	color bool
	text  func(io.Writer, R, bool) error
	junit func(io.Writer, R) error // nil: -o offers no junit
}

func (w probedReport[R]) Write(out io.Writer, format cmdutil.Format) error {
	switch {
	case format == cmdutil.FormatText:
		return w.text(out, w.r, w.color)
	case format == cmdutil.FormatJSON:
		return availability.WriteJSON(out, w.r)
	case format == cmdutil.FormatJUnit && w.junit != nil:
		return w.junit(out, w.r)
	case w.junit != nil:
		return cmdutil.UnknownOutput(format, cmdutil.FormatText, cmdutil.FormatJSON, cmdutil.FormatJUnit)
	}
	return cmdutil.UnknownOutput(format, cmdutil.FormatText, cmdutil.FormatJSON)
}

// pressureReport is chaos pressure's report: text has printed the timeline as it happened, so it
// ends with the verdict (watched runs) or nothing; json or junit are the whole report.
type pressureReport struct {
	r       *pressure.Report
	watched bool
}

func (w pressureReport) Write(out io.Writer, format cmdutil.Format) error {
	switch format {
	case cmdutil.FormatJSON:
		return availability.WriteJSON(out, w.r)
	case cmdutil.FormatJUnit:
		return pressure.WriteJUnit(out, w.r)
	case cmdutil.FormatText:
		if w.watched {
			_, err := fmt.Fprintln(out, w.r.Verdict.Message)
			return err
		}
		return nil
	}
	return cmdutil.UnknownOutput(format, cmdutil.FormatText, cmdutil.FormatJSON, cmdutil.FormatJUnit)
}

// dryRunPlan is a probed experiment's --dry-run plan: text or json.
type dryRunPlan[P any] struct {
	plan P
	text func(io.Writer, P) error
}

func (w dryRunPlan[P]) Write(out io.Writer, format cmdutil.Format) error {
	switch format {
	case cmdutil.FormatJSON:
		return availability.WriteJSON(out, w.plan)
	case cmdutil.FormatText:
		return w.text(out, w.plan)
	}
	return cmdutil.UnknownOutput(format, cmdutil.FormatText, cmdutil.FormatJSON)
}
