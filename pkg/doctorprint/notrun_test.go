package doctorprint

import (
	"slices"
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// doctor -f's line of the rules it did not run leaves out those it runs on documents: the spec's,
// the documents' own, and those that judge what documents declare beside a cluster spec.
func TestNotRunLeavesOutWhatFilesRun(t *testing.T) {
	for _, online := range []bool{true, false} {
		got := notRun(online)
		for _, ran := range []string{diagnose.RuleBudgetNeverAllows, diagnose.RuleNetworkPolicyBlocksDNS, diagnose.RuleGCSStoreUpgradeBlocked, diagnose.RuleServeHeadHasCPUs, diagnose.RuleFieldDropped} {
			if slices.Contains(got, ran) {
				t.Errorf("online %v: %s runs on documents, and is listed as not run", online, ran)
			}
		}
		if !slices.Contains(got, diagnose.RuleHeadEvicted) || !slices.Contains(got, diagnose.RuleGCSStoreShared) {
			t.Errorf("online %v: the rules about running clusters are not all listed: %v", online, got)
		}
		if slices.Contains(got, diagnose.RuleOperatorOutdated) == online {
			t.Errorf("online %v: the operator's rules run exactly when a cluster answers: %v", online, got)
		}
	}
}
