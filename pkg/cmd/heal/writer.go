package heal

import (
	"io"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
)

// formats are heal's -o values, text (its default) first.
var formats = []cmdutil.Format{cmdutil.FormatText, cmdutil.FormatJSON}

// report is heal's one writer (cmdutil.Writer). Text is read as heal goes (the plan before
// anything changes, each outcome as it comes), so it writes the part the document has reached:
// the plan until there is a result, then the replacements. JSON is the whole document, written
// once, when heal stops.
type report struct {
	doc     Document
	where   string
	timeout time.Duration
}

func (w report) Write(out io.Writer, f cmdutil.Format) error {
	switch f {
	case cmdutil.FormatText:
		if w.doc.Result == nil {
			printPlan(out, w.doc.Plan, w.where)
		} else {
			printReplacements(out, *w.doc.Result, w.timeout)
		}
		return nil
	case cmdutil.FormatJSON:
		doc := w.doc
		if doc.Plan.Actions == nil {
			doc.Plan.Actions = []repair.Action{}
		}
		if doc.Plan.NotHealable == nil {
			doc.Plan.NotHealable = []repair.Skip{}
		}
		return cmdutil.PrintStructured(out, f, doc)
	}
	return cmdutil.UnknownOutput(f, formats...)
}

// write writes doc to w in format f.
func (o *Options) write(w io.Writer, doc Document, f cmdutil.Format) error {
	return report{doc: doc, where: o.where(), timeout: o.timeout}.Write(w, f)
}
