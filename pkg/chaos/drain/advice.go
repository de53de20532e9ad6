package drain

import (
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
)

// Advice rule IDs are stable: scripts and docs/chaos-drain.md refer to them.
const (
	AdviceNoErrors      = "no-errors"
	AdviceNoBudget      = "no-budget"
	AdviceRefused       = "budget-refused"
	AdviceHeadOnNode    = "head-on-node"
	AdviceAllEndpoints  = "all-endpoints-on-node"
	AdviceStillCordoned = "still-cordoned"
	AdviceNotRecovered  = "not-recovered"
	AdviceDrainPartial  = availability.AdvicePartial
	AdviceDrainWarmup   = availability.AdviceWarmupFailed
)

// advice draws conclusions from this run only; each names the fact it rests on, and the doctor
// rule that would have predicted it (headRule: Settings.HeadStateRule).
func advice(r *Report, t *target, heads []string, headRule string, endpointsAtCordon []string, recovered bool, until bool) []availability.Advice {
	out, more := availability.OpenAdvice(r.Probe, r.Totals, "Nothing was drained", "The node is cordoned only after a warm-up in which every request succeeds.")
	if !more {
		return out
	}
	add, tot := out.Add, r.Totals
	if tot.Requests > 0 && tot.Errors == 0 {
		add(AdviceNoErrors, "No request failed: the drain of node %s was invisible to this client at %v/s.", t.node, r.Settings.Rate)
	}
	for _, h := range heads {
		add(AdviceHeadOnNode, "The head pod %s was on the drained node: every Ray pod of its cluster depends on it (and Serve's controller, "+
			"without GCS fault tolerance). Keep heads off nodes that are drained often (a node pool of its own, or a nodeSelector); "+
			"doctor's rule %s says when a head would lose its state.", h, headRule)
	}
	if len(endpointsAtCordon) > 0 && allOn(endpointsAtCordon, t) {
		add(AdviceAllEndpoints, "Every ready endpoint of the probed Service (%s) was on node %s: nothing else could answer while it drained. "+
			"Spread the worker group over nodes (topologySpreadConstraints or pod anti-affinity).", strings.Join(endpointsAtCordon, ", "), t.node)
	}
	refused := r.Drain.Refusals()
	switch {
	case refused > 0:
		add(AdviceRefused, "A PodDisruptionBudget refused %s: it held pods on the node until others were healthy, as it should; "+
			"a drain that must finish waits for it (kubectl drain --timeout).", availability.Plural(refused, "eviction", "evictions"))
	case t.rayPods > 0 && !budgetOverRay(t) && tot.Errors > 0:
		add(AdviceNoBudget, "No PodDisruptionBudget covers the Ray pods of node %s, so the Eviction API let them all go at once: "+
			"KubeRay creates none (kuberay #5004). A budget with an integer minAvailable over each worker group (its replicas less one) keeps Serve's capacity through a drain; maxUnavailable and percentages cannot be computed over Ray pods, whose owner has no scale subresource.", t.node)
	}
	if until && !recovered {
		add(AdviceNotRecovered, "Not every group had its Ready pods back, or every drained pod gone, before --timeout: see the drain section for which.")
	}
	if r.Drain.AlreadyCordoned || !r.Drain.Uncordoned {
		add(AdviceStillCordoned, "Node %s is still cordoned: kubectl uncordon %s when it may take pods again.", t.node, t.node)
	}
	return out
}

// allOn reports whether every endpoint pod was one of the pods the drain evicted.
func allOn(endpoints []string, t *target) bool {
	on := map[string]bool{}
	for _, p := range t.pods {
		on[p.Name] = true
	}
	for _, e := range endpoints {
		if !on[e] {
			return false
		}
	}
	return true
}

// budgetOverRay reports whether a budget covers one of the Ray pods the drain evicts.
func budgetOverRay(t *target) bool {
	ray := map[string]bool{}
	for i := range t.pods {
		if isRay(&t.pods[i]) {
			ray[t.pods[i].Namespace+"/"+t.pods[i].Name] = true
		}
	}
	for _, b := range t.budgets {
		for _, p := range b.Pods {
			if ray[b.Namespace+"/"+p] {
				return true
			}
		}
	}
	return false
}
