package diagnose

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The admission rules (scope "admission"): a RayCluster read from a file, checked against the
// cluster it would be applied to (doctor -f with a cluster, issue 31; kuberay #736 asks for the
// quota case). They need Snapshot.Admission, which only that loader sets.
const (
	// RuleHeadAdmissionRefused: the namespace's ResourceQuota or LimitRange would refuse the head
	// pod KubeRay creates. The RayCluster is accepted; its head never exists, and KubeRay retries
	// the create on every reconcile, each refusal a Warning Event in the API server's words
	// (PodReconciliationError from v1.1.1, seen on the sandbox).
	RuleHeadAdmissionRefused = "head-admission-refused"
	// RuleHeadFitsNoNode: no node could ever hold the head: allocatable too small, a taint not
	// tolerated, or a node selector or required affinity no node matches. The head stays Pending.
	RuleHeadFitsNoNode = "head-fits-no-node"
)

func admissionRules(ix *index, c *clusterView) []Finding {
	a := ix.s.Admission
	if a == nil {
		return nil
	}
	head := headPodOf(c.rc)
	var refusals []string
	if ix.s.CanSee("limitranges") {
		limitRangeDefaults(head, a.LimitRanges)
		refusals = limitRangeRefusals(head, a.LimitRanges)
	}
	if ix.s.CanSee("resourcequotas") {
		refusals = append(refusals, quotaRefusals(head, a.Quotas)...)
	}
	g := podGroups(&c.rc.Spec)[0]
	var out []Finding
	if len(refusals) > 0 {
		f := c.finding(RuleHeadAdmissionRefused, ClusterRef(c.rc),
			"the API server would refuse the head pod of "+c.what()+" ("+podAsks(head)+"): "+strings.Join(refusals, "; ")+
				"; the RayCluster itself is accepted, and KubeRay retries creating its head on every reconcile",
			"lower the head's requests and limits to fit, or raise the namespace's quota; a container the quota tracks must set requests and limits for cpu and memory (the autoscaler sidecar's come from autoscalerOptions.resources)",
			map[string]string{"namespace": c.rc.Namespace, "asks": podAsks(head), "refusals": strings.Join(refusals, "; ")})
		f.Field = g.field("containers[0].resources")
		out = append(out, f)
	}
	// No node at all is a cluster that makes them on demand (an autoscaler scaled to zero), not
	// one where the head cannot fit.
	if ix.s.CanSee("nodes") && len(ix.s.Nodes) > 0 {
		if ok, why := nodeFit(head, ix.s.Nodes); !ok {
			f := c.finding(RuleHeadFitsNoNode, ClusterRef(c.rc),
				"no node of the cluster could hold the head of "+c.what()+" ("+podAsks(head)+"): "+why+"; it would stay Pending (head-pending) until a node that fits joins",
				"lower the head's requests below a node's allocatable, tolerate the nodes' taints or fix the head's nodeSelector and affinity; with a cluster autoscaler, check that a node group can provide such a node",
				map[string]string{"asks": podAsks(head), "nodes": why})
			f.Field = g.field(fitField(why, head))
			out = append(out, f)
		}
	}
	return out
}

// fitField is the part of the head's pod spec a placement refusal points at: its node selector
// or affinity, its tolerations, else its requests.
func fitField(why string, head *corev1.Pod) string {
	switch {
	case strings.Contains(why, "affinity/selector") && len(head.Spec.NodeSelector) > 0:
		return "nodeSelector"
	case strings.Contains(why, "affinity/selector"):
		return "affinity"
	case strings.Contains(why, "untolerated taint"):
		return "tolerations"
	}
	return "containers[0].resources.requests"
}
