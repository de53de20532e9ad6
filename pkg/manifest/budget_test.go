package manifest

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// doctor -f judges a PodDisruptionBudget document by its shape against the labels KubeRay would
// give the documents' pods (the template's own included), and points the finding at the budget's
// line; an integer minAvailable is silent, and a budget is no Ray document to skip.
func TestBudgetDocuments(t *testing.T) {
	file := "testdata/budgets/cluster-with-budgets.yaml"
	s := read(t, Input{Paths: []string{file}})
	if s.SkippedCount() != 0 || len(s.Documents) != 1 {
		t.Fatalf("documents %d, skipped %v", len(s.Documents), s.Skipped)
	}
	snap := s.Snapshot("ml", time.Unix(0, 0))
	if len(snap.PDBs) != 2 || snap.PDBs[1].Namespace != "ml" {
		t.Fatalf("budgets %+v", snap.PDBs)
	}
	r := diagnose.Diagnose(snap, diagnose.Options{SpecOnly: true})
	s.Locate(&r)
	var got []diagnose.Finding
	for _, f := range r.Findings {
		if f.Rule == diagnose.RuleBudgetNeverAllows {
			got = append(got, f)
		}
	}
	if len(got) != 1 {
		t.Fatalf("budget findings %+v", got)
	}
	f := got[0]
	if f.Object.Name != "workers" || !strings.Contains(f.Message, "the pods of group(s) small") || !strings.Contains(f.Message, "maxUnavailable 1 cannot be computed") {
		t.Errorf("finding %+v", f)
	}
	if f.Source == nil || f.Source.File != file || f.Source.Line != 28 {
		t.Errorf("source %+v, want %s:28 (the budget's document)", f.Source, file)
	}
}
