package diagnose

import (
	"fmt"
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
	// RuleWorkersAdmissionRefused: the namespace's ResourceQuota or LimitRange would refuse worker
	// pods KubeRay creates once the head is admitted. KubeRay creates a group's pods one at a
	// time, in spec order, and returns at the first refused create (reconcilePods, v1.1.1 to
	// v1.6.0): that group keeps the pods admitted before it, the groups after it get none, and
	// every reconcile retries the same create (a Warning Event in the API server's words).
	RuleWorkersAdmissionRefused = "workers-admission-refused"
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
	ledger := quotaLedger{}
	if ix.s.CanSee("resourcequotas") {
		refusals = append(refusals, quotaRefusals(head, a.Quotas, ledger)...)
	}
	g := podGroups(&c.rc.Spec)[0]
	var out []Finding
	if len(refusals) == 0 {
		ledger.charge(head, a.Quotas)
		out = append(out, workersAdmission(ix, c, ledger)...)
	}
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

// workersAdmission follows KubeRay's creates of the worker pods after an admitted head, each
// charged to the ledger when admitted, and reports the first group whose pod would be refused:
// how many of its pods were admitted before, why the next is refused, and which groups after it
// get no pod.
func workersAdmission(ix *index, c *clusterView, ledger quotaLedger) []Finding {
	a := ix.s.Admission
	specs := c.rc.Spec.WorkerGroupSpecs
	for i := range specs {
		w := &specs[i]
		want := desiredWorkers(w)
		if want == 0 {
			continue
		}
		pod := workerPodOf(c.rc, w)
		var refusals []string
		if ix.s.CanSee("limitranges") {
			limitRangeDefaults(pod, a.LimitRanges)
			refusals = limitRangeRefusals(pod, a.LimitRanges)
		}
		var admitted int32
		for ; len(refusals) == 0 && admitted < want; admitted++ {
			if ix.s.CanSee("resourcequotas") {
				if refusals = quotaRefusals(pod, a.Quotas, ledger); len(refusals) > 0 {
					break
				}
			}
			ledger.charge(pod, a.Quotas)
		}
		if len(refusals) == 0 {
			continue
		}
		var after []string
		for _, later := range specs[i+1:] {
			if desiredWorkers(&later) > 0 {
				after = append(after, later.GroupName)
			}
		}
		msg := fmt.Sprintf("the API server would admit %d of the %d worker pods of group %s of %s (%s each, with KubeRay's wait-gcs-ready init container) once its head is admitted: %s",
			admitted, want, w.GroupName, c.what(), podAsks(pod), strings.Join(refusals, "; "))
		if len(after) > 0 {
			msg += fmt.Sprintf("; KubeRay stops at the first refused create and retries it on every reconcile, so group %s gets no pod", strings.Join(after, ", "))
		}
		f := c.finding(RuleWorkersAdmissionRefused, ClusterRef(c.rc), msg,
			"lower the group's requests and limits or its replicas to fit, or raise the namespace's quota; the head and the groups before it count against the quota first",
			map[string]string{"group": w.GroupName, "admitted": fmt.Sprint(admitted), "desired": fmt.Sprint(want), "asks": podAsks(pod), "refusals": strings.Join(refusals, "; ")})
		f.Field = fmt.Sprintf("spec.workerGroupSpecs[%d].template.spec.containers[0].resources", i)
		return []Finding{f}
	}
	return nil
}
