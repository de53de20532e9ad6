package ray

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubectl/pkg/util/podutils"
)

// RunningReady reports whether p is Running and its Ready condition is True: a head the
// watches may count as back. It does not look at deletion; callers that must, do.
func RunningReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && podutils.IsPodReady(p)
}
