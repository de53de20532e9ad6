package chaos

import (
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

func TestAdviceFromDoctorKeepsServeRules(t *testing.T) {
	fs := []diagnose.Finding{
		{Rule: diagnose.RuleServeHeadInService, Message: "serve Service demo-serve-svc sends traffic to head pod h", Remedy: "set spec.excludeHeadPodFromServeSvc: true"},
		{Rule: "head-evicted", Message: "not about 502s", Remedy: "x"},
		{Rule: diagnose.RuleGCSFTOff, Message: "no GCS FT", Remedy: "enable it"},
	}
	got := headKillAdvice(fs)
	if len(got) != 2 || got[0].Source != "doctor" || got[0].Rule != diagnose.RuleServeHeadInService ||
		got[0].Text != "serve Service demo-serve-svc sends traffic to head pod h; fix: set spec.excludeHeadPodFromServeSvc: true" || got[1].Rule != diagnose.RuleGCSFTOff {
		t.Fatalf("advice %+v", got)
	}
}
