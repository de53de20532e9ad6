package chaos

import (
	"fmt"
	"io"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/drain"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/headkill"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/pressure"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/upgrade"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/workerkill"
)

// The one writer of each document kind the experiments print (cmdutil.Writer): every format
// their -o offers, in one place. Plans have no JUnit (validateOutput refuses it first).

// headKillReport is chaos head-kill's report: text (colored on a terminal), json or junit.
type headKillReport struct {
	r     *headkill.Report
	color bool
}

func (w headKillReport) Write(out io.Writer, format string) error {
	switch format {
	case "json":
		return availability.WriteJSON(out, w.r)
	case "junit":
		return headkill.WriteJUnit(out, w.r)
	}
	return headkill.WriteText(out, w.r, w.color)
}

// pressureReport is chaos pressure's report: text has printed the timeline as it happened, so it
// ends with the verdict (watched runs) or nothing; json or junit are the whole report.
type pressureReport struct {
	r       *pressure.Report
	watched bool
}

func (w pressureReport) Write(out io.Writer, format string) error {
	switch format {
	case "json":
		return availability.WriteJSON(out, w.r)
	case "junit":
		return pressure.WriteJUnit(out, w.r)
	}
	if w.watched {
		_, err := fmt.Fprintln(out, w.r.Verdict.Message)
		return err
	}
	return nil
}

// upgradeReport is chaos upgrade's report: text or json.
type upgradeReport struct {
	r     *upgrade.Report
	color bool
}

func (w upgradeReport) Write(out io.Writer, format string) error {
	if format == "json" {
		return availability.WriteJSON(out, w.r)
	}
	return upgrade.WriteText(out, w.r, w.color)
}

// dryRunPlan is a probed experiment's --dry-run plan: text or json.
type dryRunPlan[P any] struct {
	plan P
	text func(io.Writer, P) error
}

func (w dryRunPlan[P]) Write(out io.Writer, format string) error {
	if format == "json" {
		return availability.WriteJSON(out, w.plan)
	}
	return w.text(out, w.plan)
}

// drainReport is chaos drain's report: text or json.
type drainReport struct {
	r     *drain.Report
	color bool
}

func (w drainReport) Write(out io.Writer, format string) error {
	if format == "json" {
		return availability.WriteJSON(out, w.r)
	}
	return drain.WriteText(out, w.r, w.color)
}

// workerKillReport is chaos worker-kill's report: text or json.
type workerKillReport struct {
	r     *workerkill.Report
	color bool
}

func (w workerKillReport) Write(out io.Writer, format string) error {
	if format == "json" {
		return availability.WriteJSON(out, w.r)
	}
	return workerkill.WriteText(out, w.r, w.color)
}
