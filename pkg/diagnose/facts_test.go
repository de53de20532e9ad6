package diagnose

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Facts are heal's contract and Evidence is what people read: on every fixture, each rule that
// heal reads sets the facts that say what its evidence says. A rule that forgets a fact fails
// here; so does one whose words and facts disagree. The fixtures must exercise every field.
func TestFactsMatchEvidence(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "rules", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	seen := map[string]bool{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		fx := loadFixture(t, name)
		for _, f := range Diagnose(&fx.snap, DefaultOptions()).Findings {
			for _, problem := range factsProblems(f, seen) {
				t.Errorf("%s: %s on %s: %s", name, f.Rule, f.Object.Name, problem)
			}
		}
	}
	for _, field := range []string{"Operator", "OperatorReplacesBy", "NodeDown", "Pods", "Head", "CleanupJobComplete", "Loop", "Loop.LastExit"} {
		if !seen[field] {
			t.Errorf("no fixture sets Facts.%s: add one, or this test checks nothing of it", field)
		}
	}
}

// factsProblems compares f's facts with its evidence and notes in seen which fields were set.
func factsProblems(f Finding, seen map[string]bool) []string {
	var out []string
	check := func(field string, set bool, got, want string) {
		if set {
			seen[field] = true
		}
		if got != want {
			out = append(out, fmt.Sprintf("Facts.%s = %q, evidence says %q", field, got, want))
		}
	}
	ev, fa := f.Evidence, f.Facts
	switch f.Rule {
	case RuleHeadEvicted, RuleHeadTerminated, RuleHeadRestartDisabled, RuleGCSFTFinalizerStuck:
		check("Operator", fa.Operator != "", fa.Operator, ev["operator"])
	}
	switch f.Rule {
	case RuleHeadEvicted, RuleHeadTerminated:
		by := ""
		if !fa.OperatorReplacesBy.IsZero() {
			by = fa.OperatorReplacesBy.UTC().Format(time.RFC3339)
		}
		check("OperatorReplacesBy", by != "", by, ev[EvidenceOperatorReplacesBy])
	case RuleHeadTerminatingStuck:
		check("NodeDown", fa.NodeDown, fmt.Sprint(fa.NodeDown), fmt.Sprint(strings.Contains(f.Remedy, "--force")))
	case RuleWorkersStale:
		var names []string
		for _, p := range fa.Pods {
			names = append(names, p.Name)
		}
		check("Pods", len(names) > 0, strings.Join(names, ","), ev["workers"])
		check("Head", fa.Head != "", fa.Head, ev["head"])
	case RuleHeadRecreateLoop:
		check("Head", fa.Head != "", fa.Head, ev["head"])
		if fa.Loop == nil {
			return append(out, "no Facts.Loop")
		}
		check("Loop", true, fmt.Sprint(fa.Loop.Deletions)+" in "+Age(fa.Loop.Window), ev["deletions"]+" in "+ev["window"])
		exit := ""
		if e := fa.Loop.LastExit; e != nil {
			exit = fmt.Sprint(e.Code) + " " + e.Reason
		}
		want := ""
		if code, ok := ev["lastExitCode"]; ok {
			want = code + " " + ev["lastReason"]
		}
		check("Loop.LastExit", exit != "", exit, want)
	case RuleGCSFTFinalizerStuck:
		check("CleanupJobComplete", fa.CleanupJobComplete, fmt.Sprint(fa.CleanupJobComplete), fmt.Sprint(ev["jobState"] == "Complete"))
	}
	return out
}
