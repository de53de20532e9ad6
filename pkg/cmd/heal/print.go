package heal

import (
	"fmt"
	"io"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
)

// printPlan prints what heal will do, then what it will not and why, before anything changes:
// each pod on a line, the evidence on the next (-o json has the whole why).
func printPlan(w io.Writer, p repair.HealPlan, where string) {
	if len(p.Actions) > 0 {
		fmt.Fprintf(w, "Plan: %s\n", plural(len(p.Actions), "delete", "deletes"))
		for _, a := range p.Actions {
			why := a.Summary
			if why == "" {
				why = a.Why
			}
			fmt.Fprintf(w, "  %s pod %s/%s of RayCluster %s (%s)\n    %s\n", a.Verb(), a.Pod.Namespace, a.Pod.Name, a.Cluster.Name, a.Rule, why)
		}
	}
	if len(p.FinalizerRemovals) > 0 {
		fmt.Fprintf(w, "Plan: %s\n", plural(len(p.FinalizerRemovals), "finalizer removal", "finalizer removals"))
		for _, r := range p.FinalizerRemovals {
			fmt.Fprintf(w, "  remove finalizer %s from RayCluster %s/%s (%s): %s\n", r.Finalizer, r.Cluster.Namespace, r.Cluster.Name, r.Rule, r.LeftBehind)
		}
	}
	if len(p.NotHealable) > 0 {
		fmt.Fprintf(w, "Not healable: %d\n", len(p.NotHealable))
		for _, s := range p.NotHealable {
			fmt.Fprintf(w, "  %s %s/%s of RayCluster %s (%s)\n    %s\n", lower(s.Object.Kind), s.Object.Namespace, s.Object.Name, s.Cluster.Name, s.Rule, s.Why)
		}
	}
	printAccepted(w, p.Accepted)
	if len(p.Actions) == 0 {
		fmt.Fprintf(w, "Nothing to heal%s.\n", where)
	}
}

func printOutcome(out, errOut io.Writer, o repair.Outcome) {
	fmt.Fprintln(out, o.Message)
	// Evidence kept in part says both: where it is, and what it lacks.
	if o.Evidence != "" {
		fmt.Fprintf(out, "  kept its evidence (YAML, Events, logs) in %s\n", o.Evidence)
	}
	if o.EvidenceProblem != "" {
		fmt.Fprintf(errOut, "warning: %s\n", o.EvidenceProblem)
	}
	switch {
	case o.EventProblem != "":
		fmt.Fprintf(errOut, "warning: %s\n", o.EventProblem)
	case o.Result == repair.Deleted:
		fmt.Fprintf(out, "  recorded Event %s on RayCluster %s/%s and on the pod\n", repair.EventReason, o.Action.Cluster.Namespace, o.Action.Cluster.Name)
	}
}

func printFinalizerOutcome(out, errOut io.Writer, o repair.FinalizerOutcome) {
	fmt.Fprintln(out, o.Message)
	switch {
	case o.EventProblem != "":
		fmt.Fprintf(errOut, "warning: %s\n", o.EventProblem)
	case o.Result == repair.Removed:
		fmt.Fprintf(out, "  recorded Event %s on RayCluster %s/%s\n", repair.EventReasonFinalizer, o.Removal.Cluster.Namespace, o.Removal.Cluster.Name)
	}
}

// printReplacements reports --wait: time to replacement and time to ready per healed cluster.
func printReplacements(w io.Writer, rep repair.Report, timeout time.Duration) {
	for _, r := range rep.Replacements {
		c := r.Cluster.Namespace + "/" + r.Cluster.Name
		switch {
		case r.Ready && r.Existing:
			fmt.Fprintf(w, "RayCluster %s: head %s (already there) is Running and Ready\n", c, r.Pod)
		case r.Ready:
			fmt.Fprintf(w, "RayCluster %s: new head %s created %s after the delete, Running and Ready after %s\n", c, r.Pod, dur(r.SeenAfter), dur(r.ReadyAfter))
		case r.Pod != "":
			fmt.Fprintf(w, "RayCluster %s: new head %s created %s after the delete, not Running and Ready within %s\n", c, r.Pod, dur(r.SeenAfter), timeout)
		default:
			fmt.Fprintf(w, "RayCluster %s: no new head within %s\n", c, timeout)
		}
	}
}

func dur(d time.Duration) string { return d.Round(time.Millisecond).String() }

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func lower(kind string) string {
	switch kind {
	case "Pod":
		return "pod"
	case "RayCluster":
		return "raycluster"
	case "":
		return "object"
	}
	return kind
}
