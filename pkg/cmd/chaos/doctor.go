package chaos

import (
	"context"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/headkill"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/load"
)

// The experiments run no rule of doctor's: the commands do, and hand them what doctor found.

// headKillDoctor is doctor's advice for a head kill of s's target, on what doctor reads of its
// namespace when the run asks (after the kill's dry run).
func headKillDoctor(api load.API, s *headkill.Settings) headkill.Doctor {
	return func(ctx context.Context) ([]availability.Advice, error) {
		snap, err := api.LoadSnapshot(ctx, load.Query{Namespace: s.Namespace, Now: s.Now(), Reads: diagnose.Reads})
		if err != nil {
			return nil, err
		}
		target := &diagnose.Target{Kind: "RayCluster", Name: s.Cluster}
		if s.RayService != "" {
			target = &diagnose.Target{Kind: "RayService", Name: s.RayService}
		}
		return headKillAdvice(diagnose.DiagnoseTarget(snap, diagnose.DefaultOptions(), target).Findings), nil
	}
}

// headKillRules are doctor's rules about 502s during a head restart.
var headKillRules = map[string]bool{
	diagnose.RuleServeHeadInService: true,
	diagnose.RuleServeHeadHasCPUs:   true,
	diagnose.RuleGCSFTOff:           true,
}

// headKillAdvice keeps doctor's findings about 502s during a head restart, as report advice.
func headKillAdvice(fs []diagnose.Finding) []availability.Advice {
	var out []availability.Advice
	for _, f := range fs {
		if headKillRules[f.Rule] {
			out = append(out, availability.Advice{Source: "doctor", Rule: f.Rule, Text: f.Message + "; fix: " + f.Remedy})
		}
	}
	return out
}

// headStateRule is doctor's rule that says when a head would lose its state: drain's advice
// names it when a head was on the drained node.
const headStateRule = diagnose.RuleGCSFTOff
