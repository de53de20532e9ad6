package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// justified are the warnings doctor -f may give on KubeRay's own samples, each with the doc or
// issue its docs/rules.md section cites as recommending otherwise (issue 31: a sample may carry
// a risk a doc names, never an error).
var justified = map[string]string{
	"serve-head-has-cpus": "#1153",
}

// KubeRay's own samples of every operator version the sandbox runs, through doctor -f offline:
// every document parses, no finding is an error, and each warning's rule is one whose section in
// docs/rules.md cites the doc that recommends otherwise. Costs about 3 s (no cluster is asked).
func TestDoctorManifestKubeRaySamples(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	rules, err := os.ReadFile(filepath.Join("..", "..", "docs", "rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range sandbox.Operators {
		t.Run(v, func(t *testing.T) {
			sample, err := h.SB.Config().OperatorSample(h.Ctx, v, "ray-cluster.complete.yaml")
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Dir(sample)
			res := h.Run("doctor", "-f", dir, "-R", "--offline", "-o", "json", "--fail-on", "never")
			if res.Code != 0 || res.Stderr != "" {
				t.Fatalf("doctor -f on KubeRay %s's samples: %s", v, res)
			}
			var d struct {
				Manifests struct {
					Documents int
					Errors    []string
				}
				Findings []struct {
					Rule, Severity, Message string
					Source                  struct{ File string }
				}
			}
			if err := json.Unmarshal([]byte(res.Stdout), &d); err != nil {
				t.Fatal(err)
			}
			if d.Manifests.Documents < 30 || len(d.Manifests.Errors) != 0 {
				t.Fatalf("KubeRay %s's samples: %d documents, errors %q", v, d.Manifests.Documents, d.Manifests.Errors)
			}
			seen := map[string]int{}
			for _, f := range d.Findings {
				seen[f.Rule+" "+f.Severity]++
				switch f.Severity {
				case "error":
					t.Errorf("%s: error %s on a KubeRay sample: %s", filepath.Base(f.Source.File), f.Rule, f.Message)
				case "warning":
					cite, ok := justified[f.Rule]
					if !ok {
						t.Errorf("%s: warning %s on a KubeRay sample, with no doc named in justified: %s", filepath.Base(f.Source.File), f.Rule, f.Message)
						continue
					}
					if !strings.Contains(section(string(rules), f.Rule), cite) {
						t.Errorf("docs/rules.md's section on %s does not cite %s", f.Rule, cite)
					}
				}
			}
			t.Logf("KubeRay %s: %d documents; findings by rule: %v", v, d.Manifests.Documents, seen)
		})
	}
}

// section is a rule's section of docs/rules.md, "" when it has none.
func section(doc, rule string) string {
	i := strings.Index(doc, "## `"+rule+"`")
	if i < 0 {
		return ""
	}
	rest := doc[i+3:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}
