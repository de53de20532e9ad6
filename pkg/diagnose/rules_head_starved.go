package diagnose

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// RuleHeadStarvedByWorkers refines head-pending: the head is Unschedulable for lack of resources
// while workers of the same cluster hold places on nodes (kuberay #3592; the fix proposed there,
// PR #3592, was closed unmerged). It replaces the head-pending finding for that pod, so one pod
// gets one finding with the sharper advice.
const RuleHeadStarvedByWorkers = "head-starved-by-workers"

// headStarved turns an Unschedulable head-pending finding into head-starved-by-workers when the
// scheduler's reason is a shortage (not a selector, affinity or taint mismatch, which no worker
// causes) and at least one live worker of the cluster is bound to a node.
func headStarved(c *clusterView, p *corev1.Pod, f Finding) Finding {
	msg := f.Evidence["schedulerMessage"]
	if f.Evidence["reason"] != corev1.PodReasonUnschedulable || !shortage(msg) {
		return f
	}
	var nodes []string
	seen := map[string]bool{}
	scheduled := 0
	for _, w := range c.workers {
		if !ray.Live(w) || w.Spec.NodeName == "" {
			continue
		}
		scheduled++
		if !seen[w.Spec.NodeName] {
			seen[w.Spec.NodeName] = true
			nodes = append(nodes, w.Spec.NodeName)
		}
	}
	if scheduled == 0 {
		return f
	}
	sort.Strings(nodes)
	f.Rule, f.Severity = RuleHeadStarvedByWorkers, severityOf(RuleHeadStarvedByWorkers)
	f.Evidence["scheduledWorkers"] = fmt.Sprint(scheduled)
	f.Evidence["workerNodes"] = strings.Join(nodes, ",")
	f.Message = fmt.Sprintf("head pod %s is Pending for %s: Unschedulable: %s; meanwhile %d worker(s) of this cluster are scheduled (on %s): "+
		"the cluster's own workers may hold the capacity the head needs (kuberay #3592)",
		p.Name, f.Evidence["age"], msg, scheduled, strings.Join(nodes, ", "))
	f.Remedy = "let the head win the capacity: give headGroupSpec.template.spec a priorityClassName of higher priority than the workers' " +
		"(the scheduler then preempts a worker), or use gang scheduling (the operator's batch scheduler option with Volcano or " +
		"YuniKorn, and the label ray.io/scheduler-name on the RayCluster) so head and workers are placed together; kubectl describe pod " + p.Name + " -n " + p.Namespace
	return f
}

// shortage reports whether a FailedScheduling message says nodes lack resources, the only
// reason workers already placed can be the cause ("0/3 nodes are available: 3 Insufficient cpu.").
func shortage(msg string) bool {
	return strings.Contains(msg, "Insufficient ") || strings.Contains(msg, "Too many pods")
}
