package diagnose

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleBudgetNeverAllows is an invariant between a PodDisruptionBudget and the pods it selects:
// a budget over Ray pods must be one the disruption controller can compute. It cannot compute
// maxUnavailable, or a percentage, over pods whose controller has no scale subresource, and a Ray
// pod's controller is its RayCluster, whose CRD has none (v1.1.1 to v1.7.0): the controller marks
// the budget DisruptionAllowed=False (SyncFailed), allows nothing, and the Eviction API refuses
// every eviction it covers, so every node drain hangs on the cluster's pods. maxUnavailable 0
// allows nothing by its own words. KubeRay creates no budget of its own (kuberay #5004), so
// nothing resolves it but the user.
const RuleBudgetNeverAllows = "budget-never-allows"

// budgetShapeUncomputable says which field of pdb's spec the disruption controller cannot
// compute over Ray pods ("" for an integer minAvailable): what a budget read from a file shows
// before any controller has seen it.
func budgetShapeUncomputable(pdb *policyv1.PodDisruptionBudget) string {
	if mu := pdb.Spec.MaxUnavailable; mu != nil {
		return "maxUnavailable " + mu.String()
	}
	if ma := pdb.Spec.MinAvailable; ma != nil && ma.Type != 0 {
		return "minAvailable " + ma.String() + " (a percentage)"
	}
	return ""
}

// budgetNeverAllows reports each budget of the cluster's namespace that selects its pods and can
// never allow an eviction. Live, it selects the cluster's live pods and trusts what the
// disruption controller wrote (ray.BudgetNeverAllows); read from a file (Options.SpecOnly), it
// selects the labels KubeRay would put on each group's pods and judges the budget's shape.
// Silent on budgets and clusters being deleted, and on a suspended cluster (no pods to evict).
func budgetNeverAllows(ix *index, c *clusterView) []Finding {
	rc := c.rc
	if len(ix.s.PDBs) == 0 || rc.DeletionTimestamp != nil || c.suspended() {
		return nil
	}
	var out []Finding
	for i := range ix.s.PDBs {
		pdb := &ix.s.PDBs[i]
		if pdb.Namespace != rc.Namespace || pdb.DeletionTimestamp != nil || pdb.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			continue
		}
		var covered []string
		var why string
		if ix.opts.SpecOnly {
			covered = groupsSelected(c, sel)
			if shape := budgetShapeUncomputable(pdb); shape != "" {
				why = "its " + shape + " cannot be computed over Ray pods: their owner, a RayCluster, has no scale subresource, so the disruption controller will mark it SyncFailed and allow no eviction"
			}
			if mu := pdb.Spec.MaxUnavailable; mu != nil && (mu.String() == "0" || mu.String() == "0%") {
				why = "its maxUnavailable is " + mu.String() + ": it allows no eviction, by its own words and because maxUnavailable cannot be computed over Ray pods"
			}
		} else {
			covered = podsSelected(c, sel)
			why = ray.BudgetNeverAllows(pdb)
		}
		if len(covered) == 0 || why == "" {
			continue
		}
		what := "pod(s) " + strings.Join(covered, ", ")
		if ix.opts.SpecOnly {
			what = "the pods of group(s) " + strings.Join(covered, ", ")
		}
		msg := fmt.Sprintf("PodDisruptionBudget %s/%s selects %s of RayCluster %s and can never allow an eviction: %s; every node drain "+
			"(an upgrade, an autoscaler's scale-down, kubectl drain) hangs on these pods", pdb.Namespace, pdb.Name, what, rc.Name, why)
		remedy := fmt.Sprintf("replace the budget's maxUnavailable or percentage with an integer minAvailable per worker group (its replicas less "+
			"one keeps the group's capacity through a drain): kubectl edit pdb %s -n %s; or delete it (kubectl delete pdb %s -n %s)", pdb.Name, pdb.Namespace, pdb.Name, pdb.Namespace)
		ev := map[string]string{"budget": pdb.Name, "selects": strings.Join(covered, ",")}
		if mu := pdb.Spec.MaxUnavailable; mu != nil {
			ev["maxUnavailable"] = mu.String()
		}
		if ma := pdb.Spec.MinAvailable; ma != nil {
			ev["minAvailable"] = ma.String()
		}
		if !ix.opts.SpecOnly {
			ev["disruptionsAllowed"] = fmt.Sprint(pdb.Status.DisruptionsAllowed)
		}
		out = append(out, c.finding(RuleBudgetNeverAllows, state.Ref{Kind: "PodDisruptionBudget", Namespace: pdb.Namespace, Name: pdb.Name, UID: string(pdb.UID)}, msg, remedy, ev))
	}
	return out
}

// podsSelected are the names of the cluster's live pods sel selects.
func podsSelected(c *clusterView, sel labels.Selector) []string {
	var out []string
	for _, p := range append(append([]*corev1.Pod(nil), c.heads...), c.workers...) {
		if ray.Live(p) && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}

// groupsSelected are the groups (the head's "headgroup" included) whose pods sel would select.
func groupsSelected(c *clusterView, sel labels.Selector) []string {
	var out []string
	for _, g := range groupPodLabels(c) {
		if sel.Matches(g.labels) {
			out = append(out, g.group)
		}
	}
	return out
}

// groupLabels are the labels of a group's pods before any exists.
type groupLabels struct {
	group, nodeType string
	labels          labels.Set
}

// groupPodLabels are the labels KubeRay puts on each group's pods (the head's "headgroup"
// first), over those of the group's template: what a selector read from a file is judged by.
func groupPodLabels(c *clusterView) []groupLabels {
	cluster := c.rc.Name
	of := func(group, nodeType string, template map[string]string) groupLabels {
		l := labels.Set{}
		for k, v := range template {
			l[k] = v
		}
		l[ray.LabelCluster], l[ray.LabelGroup], l[ray.LabelNodeType], l[ray.LabelIsRayNode] = cluster, group, nodeType, "yes"
		l["app.kubernetes.io/name"], l[ray.LabelCreatedBy] = "kuberay", ray.ComponentKubeRay
		return groupLabels{group, nodeType, l}
	}
	out := []groupLabels{of("headgroup", ray.NodeTypeHead, c.rc.Spec.HeadGroupSpec.Template.Labels)}
	for i := range c.rc.Spec.WorkerGroupSpecs {
		g := &c.rc.Spec.WorkerGroupSpecs[i]
		out = append(out, of(g.GroupName, ray.NodeTypeWorker, g.Template.Labels))
	}
	return out
}
