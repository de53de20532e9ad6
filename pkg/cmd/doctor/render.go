package doctor

import (
	"io"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// Render writes doctor's report r in format ("table" or "json") as doctor -o would print it to
// a pipe (no color, no width limit), for a command that keeps the report in a file: bundle puts
// both in its archive.
func Render(w io.Writer, r *diagnose.Report, format, namespace, selector string, target *diagnose.Target) error {
	o := &Options{f: &cmdutil.Factory{NoColor: true, Width: func() int { return 0 }}, namespace: namespace, selector: selector,
		failOn: "error", target: target}
	return report{r: r, o: o}.Write(w, format)
}
