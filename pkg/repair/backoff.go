package repair

import (
	"fmt"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// backOffLoops returns actions without those on a cluster whose head is in a recreate loop (kuberay #4272):
// the head fails soon after each start, so deleting it again is one more turn of the loop, not a
// repair. Each dropped action and the loop itself become skips that say why.
func backOffLoops(actions []Action, findings []diagnose.Finding, skip func(Skip)) []Action {
	loops := map[string]diagnose.Finding{}
	for _, f := range findings {
		if f.Rule == diagnose.RuleHeadRecreateLoop {
			loops[f.Cluster.Namespace+"/"+f.Cluster.Name] = f
		}
	}
	if len(loops) == 0 {
		return actions
	}
	for _, f := range loops {
		skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: f.Object, Why: BackOffWhy(f)})
	}
	kept := actions[:0]
	for _, a := range actions {
		f, looping := loops[a.Cluster.Namespace+"/"+a.Cluster.Name]
		if !looping {
			kept = append(kept, a)
			continue
		}
		skip(Skip{Rule: a.Rule, Cluster: a.Cluster, Object: a.Pod, Why: BackOffWhy(f)})
	}
	return kept
}

// backOffPrefix starts every back-off reason.
const backOffPrefix = "heal backs off"

// BackOffWhy is heal's reason for leaving a looping cluster alone.
func BackOffWhy(f diagnose.Finding) string {
	var loop diagnose.RecreateLoop
	if f.Facts.Loop != nil {
		loop = *f.Facts.Loop
	}
	why := fmt.Sprintf(backOffPrefix+": the head was deleted and recreated %d times in the last %s (rule %s, kuberay #4272)",
		loop.Deletions, diagnose.Age(loop.Window), diagnose.RuleHeadRecreateLoop)
	if e := loop.LastExit; e != nil {
		why += fmt.Sprintf("; last exit %d (%s)", e.Code, e.Reason)
	}
	return why + "; deleting it again would only add a turn to the loop: fix the head's configuration (kubectl ray doctor shows why)"
}
