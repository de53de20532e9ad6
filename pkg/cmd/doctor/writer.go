package doctor

import (
	"io"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/metrics"
)

// report is doctor's one writer (cmdutil.Writer): the report in every format -o offers, each
// written once here (table.go, document.go, junit.go, pkg/metrics).
type report struct {
	r *diagnose.Report
	o *Options
}

func (w report) Write(out io.Writer, format string) error {
	switch format {
	case "json", "yaml":
		return cmdutil.PrintStructured(out, format, newDocument(w.r, w.o))
	case "junit":
		var files *fileFlags
		if w.o.files.set != nil {
			files = &w.o.files
		}
		return writeJUnit(out, w.r, w.o.threshold(), files)
	case "prometheus":
		return metrics.WriteDoctor(out, w.r)
	}
	return w.o.printTable(out, w.r, format == "wide")
}
