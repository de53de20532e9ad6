package headkill

import (
	"context"
	"fmt"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/report"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/load"
)

// doctorAdvice is doctor's RayService rules' findings for the target, read before the kill.
// Without permission to read what doctor reads there is no doctor advice; the run goes on.
func doctorAdvice(ctx context.Context, c Cluster, s *Settings) []report.Advice {
	snap, err := c.LoadSnapshot(ctx, load.Query{Namespace: s.Namespace, Now: s.Now()})
	if err != nil {
		fmt.Fprintf(s.Warn, "warning: no doctor advice: %v\n", err)
		return nil
	}
	target := &diagnose.Target{Kind: "RayCluster", Name: s.Cluster}
	if s.RayService != "" {
		target = &diagnose.Target{Kind: "RayService", Name: s.RayService}
	}
	return AdviceFrom(diagnose.DiagnoseTarget(snap, diagnose.DefaultOptions(), target).Findings)
}

// adviceRules are doctor's rules about 502s during a head restart.
var adviceRules = map[string]bool{
	diagnose.RuleServeHeadInService: true,
	diagnose.RuleServeHeadHasCPUs:   true,
	diagnose.RuleGCSFTOff:           true,
}

// AdviceFrom keeps doctor's findings about 502s during a head restart, as report advice.
func AdviceFrom(fs []diagnose.Finding) []report.Advice {
	var out []report.Advice
	for _, f := range fs {
		if adviceRules[f.Rule] {
			out = append(out, report.Advice{Source: "doctor", Rule: f.Rule, Text: f.Message + "; fix: " + f.Remedy})
		}
	}
	return out
}
