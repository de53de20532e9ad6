package diagnose

import (
	"fmt"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleSuspendNotReached is an invariant between what a RayService asks of its cluster and the
// cluster: a RayService whose spec.rayClusterConfig.suspend is false has a running cluster (the
// pending one during an upgrade, else the active one), OperatorGrace after the RayService last
// changed. KubeRay v1.5.0 and v1.6.0 carry a change of rayClusterConfig to an existing cluster only
// when the hash they keep of the spec allows an in-place update (shouldUpdateCluster), and a
// change of suspend never does: a RayService made suspended and then resumed keeps a suspended
// cluster with no head for good, and its reconcile fails on that headless cluster every time
// (kuberay #4686). v1.7.0 applies the nested suspend only when it creates the cluster (it leaves
// the cluster's suspend to Kueue afterwards: modifyRayCluster, rayClusterSpecForHashing) and
// suspends a RayService through its own spec.suspend, so the same state lasts there too. v1.1.1
// carries the change (the sandbox shows it).
//
// The other direction (asked suspended, cluster running) is Kueue's normal work: it admits a
// cluster by setting its suspend to false. A cluster Kueue queues (its queue-name label) is
// Kueue's to suspend or resume, and the rule stays silent on it.
const RuleSuspendNotReached = "suspend-not-reached"

// labelKueueQueue is the label by which Kueue manages a workload's suspend.
const labelKueueQueue = "kueue.x-k8s.io/queue-name"

// The releases read to leave a resumed RayService's cluster suspended: v1.5.0 and v1.6.x never
// update it (kuberay #4686); v1.7.0 applies the nested suspend at creation only.
var (
	suspendNeverCarried = releaseSpan{version.MustParseSemantic("v1.5.0"), version.MustParseSemantic("v1.7.0")}
	suspendAtCreation   = releaseSpan{version.MustParseSemantic("v1.7.0"), version.MustParseSemantic("v1.8.0")}
)

// suspendNotReached reports a RayService that asks for a running cluster while the cluster it is
// compared with is suspended, OperatorGrace after the RayService's spec last changed (its managed
// fields say when; its creation when they are gone). Silent on a RayService or a cluster being
// deleted, and on clusters Kueue queues.
func suspendNotReached(ix *index, v *serviceView) []Finding {
	rs := v.rs
	if rs.DeletionTimestamp != nil || ptr.Deref(rs.Spec.RayClusterSpec.Suspend, false) {
		return nil
	}
	rc, role := ix.comparedCluster(rs)
	if rc == nil || rc.DeletionTimestamp != nil || !ptr.Deref(rc.Spec.Suspend, false) || rc.Labels[labelKueueQueue] != "" || rs.Labels[labelKueueQueue] != "" {
		return nil
	}
	since := ix.s.Now.Sub(specChanged(&rs.ObjectMeta))
	if since <= ix.opts.OperatorGrace {
		return nil // the operator is still on its way
	}
	why := "the operator has not carried the change to it"
	remedy := "delete the RayCluster (kubectl delete raycluster " + rc.Name + " -n " + rc.Namespace + "): the operator makes a new one, running, from the RayService's spec"
	if op, ok := ix.operatorIn(suspendNeverCarried); ok {
		why = "KubeRay " + op + " never updates a RayService's cluster when only suspend changed (kuberay #4686)"
	} else if op, ok := ix.operatorIn(suspendAtCreation); ok {
		why = "KubeRay " + op + " applies spec.rayClusterConfig.suspend only when it creates the cluster (kuberay #4686)"
		remedy += "; suspend and resume a RayService with its own spec.suspend"
	}
	pods := 0
	for _, c := range ix.clusters {
		if c.rc == rc {
			pods = len(c.liveHeads()) + len(c.workers)
		}
	}
	msg := fmt.Sprintf("RayService %s/%s asks for a running cluster (spec.rayClusterConfig.suspend is not true), but its %s RayCluster %s is suspended (spec.suspend true) with %d pod(s), %s after the RayService last changed: %s",
		rs.Namespace, rs.Name, role, rc.Name, pods, age(since), why)
	ev := map[string]string{"cluster": rc.Name, "role": role, "pods": fmt.Sprint(pods), "since": age(since)}
	r := v.ref()
	return []Finding{{Rule: RuleSuspendNotReached, Severity: severityOf(RuleSuspendNotReached), Object: r, RayService: &r,
		Cluster: state.ClusterRef(rc), Message: msg, Remedy: remedy, Evidence: ev}}
}

// comparedCluster is the RayCluster KubeRay compares a RayService's spec with: the pending one
// its status names, else the active one; nil when the snapshot holds neither.
func (ix *index) comparedCluster(rs *rayv1.RayService) (*rayv1.RayCluster, string) {
	for _, c := range []struct{ name, role string }{{rs.Status.PendingServiceStatus.RayClusterName, "pending"}, {rs.Status.ActiveServiceStatus.RayClusterName, "active"}} {
		if c.name == "" {
			continue
		}
		for _, cv := range ix.clusters {
			if cv.rc.Namespace == rs.Namespace && cv.rc.Name == c.name {
				return cv.rc, c.role
			}
		}
	}
	return nil, ""
}

// specChanged is when an object was last written other than through its status: the newest
// time of its managed fields outside the status subresource, else its creation.
func specChanged(m *metav1.ObjectMeta) time.Time {
	t := m.CreationTimestamp.Time
	for _, f := range m.ManagedFields {
		if f.Subresource == "" && f.Time != nil && f.Time.After(t) {
			t = f.Time.Time
		}
	}
	return t
}
