package diagnose

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
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
	// RuleExistsInCluster: a document names a RayCluster, RayService or RayJob that exists. An
	// apply changes it; it does not create it again. KubeRay recreates no pod of a RayCluster
	// whose template changed (before v1.6.0's upgradeStrategy Recreate) and makes a RayJob's
	// cluster once; a RayService prepares a new cluster beside the active one when its cluster
	// spec changes beyond worker replicas and appended worker groups (shouldPrepareNewCluster in
	// rayservice_controller.go; zero-downtime upgrade), both counted against the quota until the
	// switch. So the admission rules judge a RayService's cluster as that new one, with the
	// active one counted, and judge nothing of an existing RayCluster or RayJob: their pods
	// already count in the quota's usage, and judging them again as new would be a false alarm.
	RuleExistsInCluster = "exists-in-cluster"
	// RuleHeadFitsNoNode: no node could ever hold the head: allocatable too small, a taint not
	// tolerated, or a node selector or required affinity no node matches. The head stays Pending.
	RuleHeadFitsNoNode = "head-fits-no-node"
)

func admissionRules(ix *index, c *clusterView) []Finding {
	a := ix.s.Admission
	if a == nil {
		return nil
	}
	var out []Finding
	if e := existingOf(a, c); e != nil {
		f, newCluster := existsInCluster(ix, c, e)
		out = append(out, f)
		if !newCluster {
			return out
		}
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
	if len(refusals) == 0 {
		ledger.charge(head, a.Quotas)
		out = append(out, workersAdmission(ix, c, ledger)...)
	}
	if len(refusals) > 0 {
		f := c.finding(RuleHeadAdmissionRefused, state.ClusterRef(c.rc), "the API server would refuse the head pod of "+c.what()+" ("+podAsks(head)+"): "+strings.Join(refusals, "; ")+
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
			f := c.finding(RuleHeadFitsNoNode, state.ClusterRef(c.rc), "no node of the cluster could hold the head of "+c.what()+" ("+podAsks(head)+"): "+why+"; it would stay Pending (head-pending) until a node that fits joins",
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
		f := c.finding(RuleWorkersAdmissionRefused, state.ClusterRef(c.rc), msg,
			"lower the group's requests and limits or its replicas to fit, or raise the namespace's quota; the head and the groups before it count against the quota first",
			map[string]string{"group": w.GroupName, "admitted": fmt.Sprint(admitted), "desired": fmt.Sprint(want), "asks": podAsks(pod), "refusals": strings.Join(refusals, "; ")})
		f.Field = fmt.Sprintf("spec.workerGroupSpecs[%d].template.spec.containers[0].resources", i)
		return []Finding{f}
	}
	return nil
}

// existsInCluster says what applying c's document changes in e, and whether it makes a new
// RayCluster whose pods the admission rules then judge (a RayService's, unless KubeRay's hash
// says the apply leaves its cluster as it is or updates it in place).
func existsInCluster(ix *index, c *clusterView, e *state.Existing) (Finding, bool) {
	what := e.Kind + " " + e.Namespace + "/" + e.Name
	var obj state.Ref
	var msg, remedy string
	ev := map[string]string{"kind": e.Kind}
	switch e.Kind {
	case "RayService":
		obj = state.Ref{Kind: "RayService", Namespace: e.Namespace, Name: e.Name}
		spec := &c.rc.Spec
		if c.service != nil {
			obj, spec = serviceRef(c.service), &c.service.Spec.RayClusterSpec
		}
		ev["activeCluster"] = e.ActiveCluster
		f, newCluster := rayServiceApply(ix, c, e, what, spec, obj, ev)
		return f, newCluster
	case "RayJob":
		obj = state.Ref{Kind: "RayJob", Namespace: e.Namespace, Name: e.Name}
		if c.owner != nil {
			obj.UID = c.owner.UID
		}
		msg = what + " exists: KubeRay makes a RayJob's cluster once, when the job is new, so an apply that changes it makes no new cluster, and its admission and placement are not judged"
		remedy = fmt.Sprintf("kubectl ray doctor rayjob/%s -n %s checks it as it runs; to check the document as a new RayJob, give it another name or namespace (-n)", e.Name, e.Namespace)
	default:
		obj = state.ClusterRef(c.rc)
		msg = what + " exists: an apply changes it in place, and KubeRay recreates none of its pods for a changed template (it creates or deletes workers for replicas; from v1.6.0, spec.upgradeStrategy.type Recreate recreates them all), and its pods already count in the quota's usage: their admission and placement are not judged again"
		remedy = fmt.Sprintf("kubectl ray doctor %s -n %s checks it as it runs (a head its quota refuses, say); to check the document as a new RayCluster, give it another name or namespace (-n)", e.Name, e.Namespace)
	}
	return c.finding(RuleExistsInCluster, obj, msg, remedy, ev), false
}
