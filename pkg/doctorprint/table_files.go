package doctorprint

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// documentTitle heads the findings of a cluster read from a file by its document: "RayService
// ml/web (web.yaml:1): warning". ok is false outside doctor -f.
func (ff *Files) documentTitle(p cmdutil.Painter, c *diagnose.ClusterReport) (string, bool) {
	if ff == nil || c == nil {
		return "", false
	}
	d := ff.Set.Of(c.Namespace, c.Name)
	if d == nil {
		return "", false
	}
	return p.Bold(d.Kind+" "+c.Namespace+"/"+d.Name) + " (" + d.String() + "): " + p.Severity(string(c.Health)), true
}

// where is "at web.yaml:12 spec.rayClusterConfig.headGroupSpec.rayStartParams.num-cpus", for a
// finding read from a file; "" otherwise.
func where(f diagnose.Finding) string {
	if f.Source == nil {
		return ""
	}
	at := fmt.Sprintf("at %s:%d", f.Source.File, f.Source.Line)
	if f.Field != "" {
		at += " " + f.Field
	}
	return at
}

// printFilesSummary is doctor -f's last lines: what was read and skipped, the verdict, and the
// rules that did not run offline.
func (ff *Files) printSummary(w io.Writer, p cmdutil.Painter, width int, r *diagnose.Report) error {
	s := r.Summary()
	line := fmt.Sprintf("%s in %s checked: %s, %s, %s%s.", Plural(len(ff.Set.Documents), "document"), Plural(ff.Set.Files, "file"),
		paintIf(p.Green, s.Healthy, fmt.Sprintf("%d healthy", s.Healthy)),
		paintIf(p.Red, s.WithErrors, fmt.Sprintf("%d with errors", s.WithErrors)),
		paintIf(p.Yellow, s.WithWarnings, fmt.Sprintf("%d with warnings", s.WithWarnings)), acceptedSuffix(s))
	if n := ff.Set.SkippedCount(); n > 0 {
		line += fmt.Sprintf(" Skipped %s of other kinds (%s).", Plural(n, "document"), skippedKinds(ff.Set.Skipped))
	}
	if len(ff.Set.Errors) > 0 {
		line += fmt.Sprintf(" %s could not be read or does not parse (above).", Plural(len(ff.Set.Errors), "file"))
	}
	if err := printWrapped(w, width, line); err != nil {
		return err
	}
	return printWrapped(w, width, p.Faint(ff.notRunLine()))
}

// notRunLine says which rules did not run, and why: doctor -f has no pods, nodes or Events to
// look at, and offline no operator either.
func (ff *Files) notRunLine() string {
	n := len(notRun(ff.Online))
	if ff.Online {
		return fmt.Sprintf("Checked as if applied now, with the cluster's operator, quotas, limit ranges and nodes; the %d rules about running clusters did not run (kubectl ray doctor checks them once applied).", n)
	}
	return fmt.Sprintf("Offline (%s): only the rules about the spec ran; %d rules did not (the operator's, the cluster's admission and placement, and those about running clusters).", ff.OfflineWhy, n)
}

// notRun are the rules doctor -f did not run: all but the spec's and the document's, and the
// operator's and admission's too when no cluster answered.
func notRun(online bool) []string {
	var out []string
	for _, r := range diagnose.Catalog {
		switch {
		case r.Scope == "spec" || r.Scope == "manifest" || diagnose.RunsOnFiles(r.ID):
		case (r.Scope == "operator" || r.Scope == "admission") && online:
		default:
			out = append(out, r.ID)
		}
	}
	return out
}

func skippedKinds(m map[string]int) string {
	kinds := make([]string, 0, len(m))
	for k, n := range m {
		kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(kinds)
	return strings.Join(kinds, ", ")
}
