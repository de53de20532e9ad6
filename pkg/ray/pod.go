package ray

import (
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubectl/pkg/util/podutils"
)

// RunningReady reports whether p is a working pod: phase Running, its Ready condition True, and
// not being deleted. A pod being deleted is on its way out whatever its phase and conditions say:
// a head that head-kill deleted stays Running and Ready through its grace period, and neither
// doctor nor heal nor the experiments may count it as a working head then.
func RunningReady(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podutils.IsPodReady(p)
}

// Running reports whether p is in phase Running and not being deleted, Ready or not: a pod that
// holds its node and will go on running (a dashboard to read, a head to put pressure on).
func Running(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning
}

// Terminal reports whether p is in phase Failed or Succeeded: it never runs again, whatever its
// restartPolicy, and only deleting it makes room for a new pod (kuberay #2125).
func Terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded
}

// Live reports whether p is neither being deleted nor terminal: a pod that runs, or will.
func Live(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && !Terminal(p)
}

// Suspended reports whether rc's spec.suspend is true: the operator deleted its pods and
// creates none until it is resumed.
func Suspended(rc *rayv1.RayCluster) bool {
	return rc.Spec.Suspend != nil && *rc.Spec.Suspend
}

// KubeletEviction reports whether the kubelet evicted p for node pressure (or for outgrowing its
// local storage), with the kubelet's message. The kubelet says so in two places: phase Failed
// with reason Evicted, and a DisruptionTarget condition with reason TerminationByKubelet. Only the
// condition is certain: a pod whose containers all exit 0 on SIGTERM ends Succeeded with no
// reason, as a real kubelet 1.34 left one (the real node's facts). TerminationByKubelet also
// marks a graceful node shutdown, which is not an eviction.
func KubeletEviction(p *corev1.Pod) (message string, evicted bool) {
	if !Terminal(p) {
		return "", false
	}
	return KubeletEvictionMark(p)
}

// KubeletEvictionMark is the kubelet's message when p carries a mark of its eviction, as the pod is
// now: reason Evicted, or the DisruptionTarget condition with reason TerminationByKubelet (not a
// node shutdown's). The condition can be seen while the containers still stop, before the phase
// is terminal: what chaos disk-pressure's timeline reports as the moment of the eviction.
// Messages come trimmed (the kubelet ends its own with a space).
func KubeletEvictionMark(p *corev1.Pod) (message string, evicted bool) {
	if p.Status.Reason == "Evicted" {
		return strings.TrimSpace(p.Status.Message), true
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == corev1.PodReasonTerminationByKubelet &&
			!strings.Contains(c.Message, "node shutdown") {
			if c.Message == "" {
				return strings.TrimSpace(p.Status.Message), true
			}
			return strings.TrimSpace(c.Message), true
		}
	}
	return "", false
}
