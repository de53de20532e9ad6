package bundle

import (
	"bytes"
	"fmt"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	corebundle "github.com/kubectl-ray/kubectl-ray/pkg/bundle"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/doctorprint"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// What Run adds to the archive beside pkg/bundle's files, and the words of its last line.

// doctorFiles are doctor's report on the bundle's snapshot, as a table and as JSON.
func (o *Options) doctorFiles(r *diagnose.Report) []artifact.File {
	var files []artifact.File
	for _, f := range []struct {
		path   string
		format cmdutil.Format
		about  string
	}{
		{"doctor.txt", cmdutil.FormatTable, "doctor's report on this bundle's snapshot (the table)"},
		{"doctor.json", cmdutil.FormatJSON, "doctor's report as doctor -o json writes it"},
	} {
		var b bytes.Buffer
		// As doctor -o prints to a pipe: no color, no width limit.
		w := doctorprint.Report{Report: r, Namespace: o.namespace, Selector: o.selector, Target: o.target, FailOn: "error", Threshold: diagnose.SeverityError}
		if err := w.Write(&b, f.format); err != nil {
			fmt.Fprintf(&b, "cannot render doctor's report: %v\n", err)
		}
		files = append(files, artifact.File{Path: f.path, About: f.about, Data: b.Bytes()})
	}
	return files
}

func (o *Options) header(now time.Time) corebundle.Header {
	h := corebundle.Header{Made: now, Namespace: o.namespace, AllNamespaces: o.allNamespaces, Selector: o.selector, NoLogs: o.noLogs, NoRayLogs: o.noRayLogs, Limits: o.limits}
	if o.target != nil {
		h.Target = o.target.String()
	}
	return h
}

func (o *Options) notFound() error {
	kinds := []string{string(o.target.Kind)}
	if o.target.Kind == "" {
		kinds = []string{"RayCluster", "RayService", "RayJob"}
	}
	return cmdutil.NotFound(o.target.Name, o.namespace, o.selector, kinds...)
}

// exitError renders a core error with its settings as flags; the code comes from its kind.
func exitError(err error) error {
	if err == nil {
		return nil
	}
	return exit.Errorf(exit.CodeOf(err), "%s", exit.Message(err))
}

func gapsLine(n int) string {
	switch n {
	case 0:
		return "everything was collected"
	case 1:
		return "1 read failed (index.md says which and why)"
	}
	return fmt.Sprintf("%d reads failed (index.md says which and why)", n)
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
