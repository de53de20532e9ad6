package diagnose

import (
	"fmt"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/utils/ptr"
)

// RuleSuspendNotReached is an invariant between what a RayService asks of its cluster and the
// cluster: spec.rayClusterConfig.suspend and the suspend of the RayCluster it compares with (the
// pending one during an upgrade, else the active one) agree, OperatorGrace after the RayService
// last changed. KubeRay v1.5.0 and v1.6.0 carry a change of rayClusterConfig to an existing
// cluster only when the hash they keep of the spec allows an in-place update
// (shouldUpdateCluster), and a change of suspend never does: a RayService made suspended and then
// resumed keeps a suspended cluster with no head for good, and its reconcile fails on that
// headless cluster every time (kuberay #4686, fixed in v1.7.0). v1.1.1 carries it (the sandbox
// shows it), and v1.7.0 does.
const RuleSuspendNotReached = "suspend-not-reached"

// The releases that never update a RayService's cluster when only its suspend changed, read in
// their source and seen in the sandbox: v1.5.0 up to v1.7.0 (kuberay #4686). Releases between
// v1.1.1 and v1.5.0 were not read: the message then names no release.
var suspendNeverCarried = releaseSpan{version.MustParseSemantic("v1.5.0"), version.MustParseSemantic("v1.7.0")}

// suspendNotReached reports a RayService whose compared cluster's suspend is not what the
// RayService asks, OperatorGrace after the RayService's spec last changed (its managed fields
// say when; its creation when they are gone). Silent on a RayService or a cluster being deleted.
func suspendNotReached(ix *index, v *serviceView) []Finding {
	rs := v.rs
	if rs.DeletionTimestamp != nil {
		return nil
	}
	rc, role := ix.comparedCluster(rs)
	if rc == nil || rc.DeletionTimestamp != nil {
		return nil
	}
	asked := ptr.Deref(rs.Spec.RayClusterSpec.Suspend, false)
	has := ptr.Deref(rc.Spec.Suspend, false)
	if asked == has {
		return nil
	}
	changed := specChanged(&rs.ObjectMeta)
	since := ix.s.Now.Sub(changed)
	if since <= ix.opts.OperatorGrace {
		return nil // the operator is still on its way
	}
	state := "suspended (spec.suspend true)"
	askedWords := "a running cluster (spec.rayClusterConfig.suspend is false)"
	remedy := "delete the RayCluster (kubectl delete raycluster " + rc.Name + " -n " + rc.Namespace + "): the operator makes a new one from the RayService's spec"
	if asked {
		state, askedWords = "not suspended", "a suspended cluster (spec.rayClusterConfig.suspend is true)"
		remedy = "set spec.suspend on the RayCluster yourself (kubectl patch raycluster " + rc.Name + " -n " + rc.Namespace + " --type merge -p '{\"spec\":{\"suspend\":true}}')"
	}
	why := "the operator has not carried the change to it"
	if op, ok := ix.operatorIn(suspendNeverCarried); ok {
		why = "KubeRay " + op + " never updates a RayService's cluster when only suspend changed (kuberay #4686, fixed in v1.7.0)"
		remedy = "upgrade the KubeRay operator to v1.7.0 or later; until then, " + remedy
	}
	pods := 0
	for _, c := range ix.clusters {
		if c.rc == rc {
			pods = len(c.liveHeads()) + len(c.workers)
		}
	}
	msg := fmt.Sprintf("RayService %s/%s asks for %s, but its %s RayCluster %s is %s with %d pod(s), %s after the RayService last changed: %s",
		rs.Namespace, rs.Name, askedWords, role, rc.Name, state, pods, age(since), why)
	ev := map[string]string{"cluster": rc.Name, "role": role, "askedSuspend": fmt.Sprint(asked), "clusterSuspend": fmt.Sprint(has), "since": age(since)}
	r := v.ref()
	return []Finding{{Rule: RuleSuspendNotReached, Severity: severityOf(RuleSuspendNotReached), Object: r, RayService: &r,
		Cluster: ClusterRef(rc), Message: msg, Remedy: remedy, Evidence: ev}}
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
