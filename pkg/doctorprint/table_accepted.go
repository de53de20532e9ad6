package doctorprint

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/accept"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// printAccepted writes the accepted findings apart, after the findings that count: each with
// its cluster, its message and what accepted it. It writes nothing when none was accepted.
func printAccepted(w io.Writer, p cmdutil.Painter, r *diagnose.Report, wide bool) (bool, error) {
	t := cmdutil.NewTable("SEVERITY", "RULE", "CLUSTER", "OBJECT", "MESSAGE")
	for _, f := range r.Findings {
		if f.Accepted == nil {
			continue
		}
		cluster := "-"
		if f.Cluster.Name != "" {
			cluster = f.Cluster.Namespace + "/" + f.Cluster.Name
		}
		t.Append(string(f.Severity), f.Rule, cluster, strings.ToLower(f.Object.Kind)+"/"+f.Object.Name, f.Message)
		if wide {
			t.Append("", "", "", "", p.Faint("fix: "+f.Remedy))
		}
		t.Append("", "", "", "", p.Faint(accept.Note(f.Accepted)))
	}
	if t.Len() == 0 {
		return false, nil
	}
	fmt.Fprintln(w, p.Bold("Accepted (reported, not counted toward --fail-on)"))
	return true, t.Render(w, "  ")
}

// acceptedSuffix ends the summary line when findings were accepted.
func acceptedSuffix(s diagnose.Summary) string {
	if s.Accepted == 0 {
		return ""
	}
	return fmt.Sprintf("; %s accepted", Plural(s.Accepted, "finding"))
}
