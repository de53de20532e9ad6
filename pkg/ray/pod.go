package ray

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubectl/pkg/util/podutils"
)

// RunningReady reports whether p is Running and its Ready condition is True: a head the
// watches may count as back. It does not look at deletion; callers that must, do.
func RunningReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && podutils.IsPodReady(p)
}

// KubeletEviction reports whether the kubelet evicted p for node pressure (or for outgrowing its
// local storage), with the kubelet's message. The kubelet says so in two places: phase Failed
// with reason Evicted, and a DisruptionTarget condition with reason TerminationByKubelet. Only the
// condition is certain: a pod whose containers all exit 0 on SIGTERM ends Succeeded with no
// reason, as a real kubelet 1.34 left one (the real node's facts). TerminationByKubelet also
// marks a graceful node shutdown, which is not an eviction.
func KubeletEviction(p *corev1.Pod) (message string, evicted bool) {
	if p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded {
		return "", false
	}
	if p.Status.Reason == "Evicted" {
		return p.Status.Message, true
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == "TerminationByKubelet" &&
			!strings.Contains(c.Message, "node shutdown") {
			return c.Message, true
		}
	}
	return "", false
}
