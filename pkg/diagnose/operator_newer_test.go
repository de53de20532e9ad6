package diagnose

import (
	"strings"
	"testing"
)

// An operator newer than the releases read is judged as the newest one: suspend-not-reached names
// what v1.7.0 does with the nested suspend, and operator-newer says which release stood in.
func TestNewerOperatorJudgedAsNewestKnown(t *testing.T) {
	f := loadFixture(t, "suspend-not-reached-newer-operator")
	var suspend, newer *Finding
	fs := Diagnose(&f.snap, DefaultOptions()).Findings
	for i := range fs {
		switch fs[i].Rule {
		case RuleSuspendNotReached:
			suspend = &fs[i]
		case RuleOperatorNewer:
			newer = &fs[i]
		}
	}
	if suspend == nil || newer == nil {
		t.Fatalf("want suspend-not-reached and operator-newer, got %+v", fs)
	}
	if !strings.Contains(suspend.Message, "KubeRay v1.7.0 applies spec.rayClusterConfig.suspend only when it creates the cluster") {
		t.Errorf("suspend-not-reached does not judge v1.8.0 as v1.7.0: %s", suspend.Message)
	}
	if newer.Evidence["operatorVersion"] != "v1.8.0" || newer.Evidence["judgedAs"] != "v1.7.0" {
		t.Errorf("operator-newer evidence %v", newer.Evidence)
	}
}
