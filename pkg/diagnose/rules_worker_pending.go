package diagnose

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleWorkerPending: workers the scheduler refuses, in its own words ("0/3 nodes are available:
// 3 Insufficient cpu"), for longer than PendingTooLong. No KubeRay version does anything about a
// Pending pod: it counts toward the group's replicas, so the operator creates no other, and the
// cluster runs short (a RayJob waits in Initializing, a RayService is never Ready). A while of it
// is normal when an autoscaler adds nodes, hence the threshold.
const RuleWorkerPending = "worker-pending"

// workerPending reports, per worker group, the workers Unschedulable for longer than
// PendingTooLong, quoting the scheduler's message of the longest waiting one.
func workerPending(ix *index, c *clusterView) []Finding {
	groups := map[string][]*corev1.Pod{}
	for _, w := range c.workers {
		if w.DeletionTimestamp != nil || w.Status.Phase != corev1.PodPending {
			continue
		}
		if sc := unschedulable(w); sc != nil && ix.s.Now.Sub(pendingSince(w, sc)) > ix.opts.PendingTooLong {
			groups[w.Labels[ray.LabelGroup]] = append(groups[w.Labels[ray.LabelGroup]], w)
		}
	}
	var out []Finding
	for _, g := range sortedKeys(groups) {
		pods := groups[g]
		longest := pods[0]
		names := make([]string, 0, len(pods))
		for _, p := range pods {
			names = append(names, p.Name)
			if pendingSince(p, unschedulable(p)).Before(pendingSince(longest, unschedulable(longest))) {
				longest = p
			}
		}
		sc := unschedulable(longest)
		waited := ix.s.Now.Sub(pendingSince(longest, sc))
		running, desired := groupCounts(c, g)
		ev := map[string]string{
			"group": g, "workers": strings.Join(names, ","), "pending": fmt.Sprint(len(pods)), "running": fmt.Sprintf("%d/%s", running, desired),
			"age": age(waited), "reason": sc.Reason, "schedulerMessage": sc.Message,
		}
		msg := fmt.Sprintf("%d worker pod(s) of group %s are Pending, the longest for %s: Unschedulable: %s; the group runs %d of %s desired workers",
			len(pods), orNone(g), age(waited), strings.TrimRight(strings.TrimSpace(sc.Message), "."), running, desired)
		remedy := "free or add capacity that matches the group's requests, node selector, affinity and tolerations (kubectl describe pod " +
			longest.Name + " -n " + longest.Namespace + "), or lower the group's requests or replicas; with an autoscaler, check that it can add such nodes"
		out = append(out, c.finding(RuleWorkerPending, state.PodRef(longest), msg, remedy, ev))
	}
	return out
}

// unschedulable is the pod's PodScheduled=False condition with the scheduler's Unschedulable
// verdict, or nil.
func unschedulable(p *corev1.Pod) *corev1.PodCondition {
	if sc := podCondition(p, corev1.PodScheduled); sc != nil && sc.Status == corev1.ConditionFalse && sc.Reason == corev1.PodReasonUnschedulable {
		return sc
	}
	return nil
}

// pendingSince is when the pod started waiting for a node: its creation, or the scheduler's
// verdict if that came later (a pod preempted back to Pending).
func pendingSince(p *corev1.Pod, sc *corev1.PodCondition) time.Time {
	t := p.CreationTimestamp.Time
	if sc != nil && sc.LastTransitionTime.After(t) {
		t = sc.LastTransitionTime.Time
	}
	return t
}
