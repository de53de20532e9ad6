package repair

import (
	"fmt"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// action checks every safety condition for deleting pod under rule and returns the action, or
// why the pod is not healable.
func (ix *index) action(rule string, clusterRef state.Ref, pod *corev1.Pod, opts Options) (Action, string) {
	if why := ix.notOwnedWhy(clusterRef, pod); why != "" {
		return Action{}, why
	}
	a := Action{
		Rule:            rule,
		Cluster:         clusterRef,
		Pod:             state.PodRef(pod),
		ResourceVersion: pod.ResourceVersion,
		Node:            pod.Spec.NodeName,
	}
	if c := ix.cluster(clusterRef, pod); c != nil {
		a.Cluster = state.ClusterRef(c)
	}
	switch {
	case pod.DeletionTimestamp != nil:
		why := ix.stuckWhy(pod, opts)
		if why != "" {
			return Action{}, why
		}
		zero := int64(0)
		a.GracePeriodSeconds = &zero
		a.Summary = fmt.Sprintf("stuck Terminating since %s on node %s, which is %s",
			pod.DeletionTimestamp.UTC().Format(time.RFC3339), pod.Spec.NodeName, ix.nodeState(pod.Spec.NodeName))
		a.Why = a.Summary + "; the operator counts it as the head until it is gone"
	case ray.Terminal(pod):
		a.Summary, a.Why = terminalWhy(pod, "head")
	default:
		return Action{}, fmt.Sprintf("the pod is %s, not terminal; heal never deletes a pod that may be running", phaseOf(pod))
	}
	return a, ""
}

// notOwnedWhy says why pod is not a head heal may touch, or "".
func (ix *index) notOwnedWhy(clusterRef state.Ref, pod *corev1.Pod) string {
	c, why := ix.controller(clusterRef, pod, "head", ray.IsHead)
	if why != "" {
		return why
	}
	// Whatever a finding says, heal never acts on a cluster whose head restart is disabled: the
	// operator would not replace what heal deletes (kuberay #4234).
	if ix.mayNotRestart(c) {
		return restartDisabledWhy("")
	}
	return ""
}

// controller is the RayCluster that controls pod, a Ray pod of the role isRole checks (ray.IsHead,
// ray.IsWorker), when it is one the operator would replace pod for; else why heal must not touch
// pod.
func (ix *index) controller(clusterRef state.Ref, pod *corev1.Pod, role string, isRole func(*corev1.Pod) bool) (*rayv1.RayCluster, string) {
	if !ray.IsRayPod(pod) {
		return nil, "not a Ray pod (no label " + ray.RayPodSelector + ")"
	}
	if !isRole(pod) {
		return nil, "not a Ray " + role + " pod"
	}
	c := ix.cluster(clusterRef, pod)
	if c == nil {
		return nil, "its RayCluster was not found; without it no operator would create a replacement"
	}
	owner := metav1.GetControllerOf(pod)
	if owner == nil || owner.Kind != "RayCluster" || !strings.HasPrefix(owner.APIVersion, "ray.io/") ||
		owner.Name != c.Name || owner.UID != c.UID {
		return nil, fmt.Sprintf("not controlled by RayCluster %s/%s; only the operator's own pods are replaced by it", c.Namespace, c.Name)
	}
	if c.DeletionTimestamp != nil {
		return nil, "its RayCluster is being deleted"
	}
	if ray.Suspended(c) {
		return nil, "its RayCluster is suspended; the operator would not create a new " + role
	}
	return c, ""
}

// mayNotRestart: the operator may create no new head for c. Beyond doctor's HeadRestartDisabled:
// the annotation whatever the version, and a provisioned RayJob cluster when no operator version
// can be read (the watchdog does not read Deployments), since v1.5.x recreates none of those.
// This costs no repair: only versions that write conditions can see a cluster provisioned, and
// they delete terminal heads themselves.
func (ix *index) mayNotRestart(c *rayv1.RayCluster) bool {
	ops := ray.FindOperators(ix.s.Deployments)
	if _, off := ray.HeadRestartDisabled(c, ops); off || c.Annotations[ray.AnnotationDisableProvisionedHeadRestart] == "true" {
		return true
	}
	for _, op := range ops {
		if _, err := version.ParseSemantic(op.Version); err == nil && op.ReadyReplicas > 0 {
			return false
		}
	}
	return c.Labels[ray.LabelOriginatedFromCRD] == "RayJob" &&
		meta.IsStatusConditionTrue(c.Status.Conditions, string(rayv1.RayClusterProvisioned))
}

// stuckWhy says why a pod being deleted may not be force-deleted, or "".
func (ix *index) stuckWhy(pod *corev1.Pod, opts Options) string {
	if !ix.s.CanSee("nodes") {
		return fmt.Sprintf("stuck Terminating on node %s, but nodes could not be read, so heal cannot tell whether the node is down", pod.Spec.NodeName)
	}
	state := ix.nodeState(pod.Spec.NodeName)
	switch state {
	case "Ready":
		return fmt.Sprintf("being deleted on node %s, which is Ready: the kubelet will finish the deletion; heal force-deletes only on a NotReady, unreachable or gone node", pod.Spec.NodeName)
	case "unknown":
		return fmt.Sprintf("being deleted on node %s, which reports no Ready condition yet, so nothing shows it is down; heal force-deletes only on a NotReady, unreachable or gone node", pod.Spec.NodeName)
	}
	if !opts.Force {
		return fmt.Sprintf("stuck Terminating on node %s, which is %s; pass %s to force-delete it (grace period 0) once you know the node is down", pod.Spec.NodeName, state, opts.name(SetForce))
	}
	return ""
}

// nodeState is "Ready", "NotReady", "unreachable", "gone", or "unknown" for a node without a
// Ready condition (ray.NodeUnreported: its kubelet never reported), which is not evidence that it
// is down, so heal never force-deletes on it.
func (ix *index) nodeState(name string) string {
	n, ok := ix.nodes[name]
	if name == "" || !ok {
		return "gone"
	}
	switch r := ray.NodeReadiness(n); r {
	case ray.NodeReady:
		return "Ready"
	case ray.NodeUnreported:
		return "unknown"
	default:
		return r
	}
}
