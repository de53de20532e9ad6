package heal

import (
	"fmt"
	"io"

	"github.com/kubectl-ray/kubectl-ray/pkg/accept"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// withoutAccepted marks the findings of r that the accept files accept and returns the others,
// the ones heal may act on, with the plan it would have made for the accepted ones turned into
// skips (so the plan says which heads were left alone, and why). With --include-accepted, or
// without a file, every finding is returned.
func (o *Options) withoutAccepted(s *state.Snapshot, r *diagnose.Report, scope accept.Scope) ([]diagnose.Finding, []repair.Skip, *accept.Status) {
	if o.acceptSet == nil || o.includeAccepted {
		return r.Findings, nil, nil
	}
	st := accept.Apply(r, o.acceptSet, scope)
	var act, accepted []diagnose.Finding
	by := map[string]*diagnose.Acceptance{}
	for _, f := range r.Findings {
		if f.Accepted == nil {
			act = append(act, f)
			continue
		}
		accepted = append(accepted, f)
		by[f.Rule+"/"+f.Cluster.Namespace+"/"+f.Cluster.Name] = f.Accepted
	}
	if len(accepted) == 0 {
		return act, nil, &st
	}
	var skips []repair.Skip
	for _, a := range repair.Plan(s, accepted, repair.Options{Force: o.force, Name: exit.Flag}).Actions {
		skips = append(skips, repair.Skip{Rule: a.Rule, Cluster: a.Cluster, Object: a.Pod,
			Why: acceptedWhy(by[a.Rule+"/"+a.Cluster.Namespace+"/"+a.Cluster.Name])})
	}
	return act, skips, &st
}

func acceptedWhy(a *diagnose.Acceptance) string {
	if a == nil {
		return "accepted"
	}
	return accept.Note(a) + "; pass --include-accepted to heal it anyway"
}

// printAccepted lists the deletes heal did not plan because their findings are accepted.
func printAccepted(w io.Writer, skips []repair.Skip) {
	if len(skips) == 0 {
		return
	}
	fmt.Fprintf(w, "Skipped as accepted: %d\n", len(skips))
	for _, s := range skips {
		fmt.Fprintf(w, "  %s %s/%s of RayCluster %s (%s): %s\n", lower(s.Object.Kind), s.Object.Namespace, s.Object.Name, s.Cluster.Name, s.Rule, s.Why)
	}
}

// watchDiagnose is the watchdog's diagnosis of one cluster's snapshot: doctor's rules, without
// the accepted findings (judged at the snapshot's time, so an entry stops accepting when it
// expires, with no restart). Stale entries are not reported here: each snapshot holds one cluster.
func (o *Options) watchDiagnose(s *state.Snapshot) []diagnose.Finding {
	r := diagnose.Diagnose(s, o.rules)
	fs, _, _ := o.withoutAccepted(s, &r, accept.Scope{Narrowed: true})
	return fs
}

// logExpired logs, when the watchdog starts, the accept entries already expired: they accept
// nothing, and whoever reads the watchdog's log should renew or delete them.
func (o *Options) logExpired(log *repair.Logger) {
	if o.acceptSet == nil || o.includeAccepted {
		return
	}
	now := o.f.Now()
	for _, e := range o.acceptSet.Entries {
		if e.Expired(now) {
			log.Line("warn", "accepted entry expired; its findings count again", "entry", e.Pos.String(),
				"accepted", e.Describe(), "expires", e.ExpiresText)
		}
	}
}
