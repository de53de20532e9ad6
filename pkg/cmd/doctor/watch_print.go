package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
	"github.com/kubectl-ray/kubectl-ray/pkg/schema"
)

// watchEvent is one -o json line, as kubectl get -w --output-watch-events prints an object.
type watchEvent struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Type       string           `json:"type"`
	Finding    diagnose.Finding `json:"finding"`
}

// changePrinter prints changes as they come: a header once, then one line each (table), or one
// JSON object per line.
type changePrinter struct {
	w             io.Writer
	json, wide    bool
	headerPrinted bool
}

func (p *changePrinter) print(cs []diagnose.Change) error {
	if p.json {
		enc := json.NewEncoder(p.w)
		for _, c := range cs {
			if err := enc.Encode(watchEvent{APIVersion: schema.APIVersion, Kind: "DoctorWatchEvent", Type: string(c.Type), Finding: c.Finding}); err != nil {
				return err
			}
		}
		return nil
	}
	var b strings.Builder
	if !p.headerPrinted {
		p.headerPrinted = true
		b.WriteString(watchRow("EVENT", "SEVERITY", "RAYCLUSTER", "RULE", "OBJECT", "MESSAGE", p.wide, "REMEDY"))
	}
	for _, c := range cs {
		f := c.Finding
		b.WriteString(watchRow(string(c.Type), string(f.Severity), f.Cluster.Namespace+"/"+f.Cluster.Name, f.Rule,
			strings.ToLower(f.Object.Kind)+"/"+f.Object.Name, f.Message, p.wide, f.Remedy))
	}
	// Through the redactor's whole pass, gitleaks' provider formats included, as -o's writer does.
	_, err := io.WriteString(p.w, redact.New().String(b.String()))
	return err
}

// watchRow pads every column but the last to a fixed width, so lines printed minutes apart line
// up (as kubectl get -w); a longer value pushes the rest right rather than being cut.
func watchRow(event, severity, cluster, rule, object, message string, wide bool, remedy string) string {
	line := fmt.Sprintf("%-8s %-8s %-24s %-24s %-32s %s", event, severity, cluster, rule, object, message)
	if wide {
		line += "  " + remedy
	}
	return strings.TrimRight(line, " ") + "\n"
}
