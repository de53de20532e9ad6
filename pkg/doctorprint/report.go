// Package doctorprint writes doctor's report in every format doctor -o offers: the table, JSON
// and YAML, JUnit and Prometheus. It sits below the commands so that doctor prints a report and
// bundle keeps one in its archive through the same writer.
package doctorprint

import (
	"io"

	"github.com/kubectl-ray/kubectl-ray/pkg/accept"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/manifest"
	"github.com/kubectl-ray/kubectl-ray/pkg/metrics"
)

// Report is doctor's one writer (cmdutil.Writer): a report and what doctor was asked, in every
// format -o offers, each written once here (table.go, document.go, junit.go, pkg/metrics).
type Report struct {
	Report *diagnose.Report

	// Namespace checked, "" for all; Selector is -l; Target the named object, nil for a sweep.
	Namespace string
	Selector  string
	Target    *diagnose.Target
	// FailOn is --fail-on as given; Threshold its severity, "" for never.
	FailOn    string
	Threshold diagnose.Severity
	// Acceptance is what the accept files did, nil when none was read.
	Acceptance *accept.Status
	// Files is doctor -f's, nil otherwise.
	Files *Files

	// Color and Width are the terminal's: Width 0 is no limit (a pipe, or a file).
	Color bool
	Width int
}

// Files is what doctor -f read, and whether a cluster answered.
type Files struct {
	Set *manifest.Set
	// Online: the cluster answered, and its operator was read.
	Online bool
	// OfflineWhy says why no cluster was asked.
	OfflineWhy string
}

func (w Report) Write(out io.Writer, f cmdutil.Format) error {
	switch f {
	case cmdutil.FormatJSON, cmdutil.FormatYAML:
		return cmdutil.PrintStructured(out, f, w.document())
	case cmdutil.FormatJUnit:
		return w.writeJUnit(out)
	case cmdutil.FormatPrometheus:
		return metrics.WriteDoctor(out, w.Report)
	case cmdutil.FormatTable, cmdutil.FormatWide:
		return w.printTable(out, f == cmdutil.FormatWide)
	}
	return cmdutil.UnknownOutput(f, Formats...)
}

// Formats are the formats doctor's report is written in, the table (its default) first.
var Formats = []cmdutil.Format{cmdutil.FormatTable, cmdutil.FormatWide, cmdutil.FormatJSON, cmdutil.FormatYAML,
	cmdutil.FormatJUnit, cmdutil.FormatPrometheus}
