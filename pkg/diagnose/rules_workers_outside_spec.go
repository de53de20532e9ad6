package diagnose

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleWorkersOutsideSpec is an invariant, not a symptom: every worker pod of a RayCluster belongs
// to a group its spec names. KubeRay reconciles group by group from spec.workerGroupSpecs (its
// reconcilePods lists each spec group's pods; v1.1.1 to v1.7.0), so the pods of a group removed
// from the spec, or renamed, are listed by nothing: they run for good, unmanaged, holding nodes'
// resources, and Ray counts them as workers no autoscaler or replica count governs. Only a
// RayCluster with upgradeStrategy Recreate (v1.6+) deletes them, with all its pods, once it sees
// the new spec.
const RuleWorkersOutsideSpec = "workers-outside-spec"

// workersOutsideSpec reports, per group the spec does not name, the live worker pods labelled with
// it, once the operator has seen the spec the cluster has now (status.observedGeneration): before
// that (or with no observedGeneration at all), and while the cluster is suspended or deleted (the
// operator deletes every pod then), the
// two facts are still on their way to agreeing.
func workersOutsideSpec(ix *index, c *clusterView) []Finding {
	rc := c.rc
	if rc.DeletionTimestamp != nil || c.suspended() || rc.Status.ObservedGeneration == 0 || rc.Status.ObservedGeneration < rc.Generation {
		return nil
	}
	inSpec := map[string]bool{}
	var groups []string
	for i := range rc.Spec.WorkerGroupSpecs {
		inSpec[rc.Spec.WorkerGroupSpecs[i].GroupName] = true
		groups = append(groups, rc.Spec.WorkerGroupSpecs[i].GroupName)
	}
	outside := map[string][]*corev1.Pod{}
	for _, w := range c.workers {
		g, labelled := w.Labels[ray.LabelGroup]
		if !labelled || inSpec[g] || !ray.Live(w) {
			continue
		}
		outside[g] = append(outside[g], w)
	}
	names := make([]string, 0, len(outside))
	for g := range outside {
		names = append(names, g)
	}
	sort.Strings(names)
	specGroups := "none"
	if len(groups) > 0 {
		specGroups = strings.Join(groups, ", ")
	}
	var out []Finding
	for _, g := range names {
		pods := outside[g]
		var podNames []string
		var refs []state.Ref
		for _, p := range pods {
			podNames = append(podNames, p.Name)
			refs = append(refs, state.PodRef(p))
		}
		ev := map[string]string{"group": g, "pods": strings.Join(podNames, ","), "count": fmt.Sprint(len(pods)), "specGroups": specGroups}
		msg := fmt.Sprintf("%d worker pod(s) of group %s run, but the spec's worker groups are %s: KubeRay reconciles only the groups "+
			"its spec names, so these pods are never scaled, replaced or deleted by it (%s)", len(pods), g, specGroups, strings.Join(podNames, ", "))
		remedy := fmt.Sprintf("if the group was removed on purpose, delete its pods: kubectl delete pods -n %s -l %s=%s,%s=%s; "+
			"if not, put group %s back in spec.workerGroupSpecs", rc.Namespace, ray.LabelCluster, rc.Name, ray.LabelGroup, g, g)
		f := c.finding(RuleWorkersOutsideSpec, state.ClusterRef(rc), msg, remedy, ev)
		f.Facts.Pods = refs
		out = append(out, f)
	}
	return out
}
