package diagnose

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

func podCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// failedAt is when a terminal pod stopped: the latest container finish time, else the last
// condition change, else its creation. Ages of evictions are measured from it.
func failedAt(p *corev1.Pod) time.Time {
	var t time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if term := cs.State.Terminated; term != nil && term.FinishedAt.After(t) {
			t = term.FinishedAt.Time
		}
	}
	if !t.IsZero() {
		return t
	}
	for _, c := range p.Status.Conditions {
		if c.LastTransitionTime.After(t) {
			t = c.LastTransitionTime.Time
		}
	}
	if !t.IsZero() {
		return t
	}
	return p.CreationTimestamp.Time
}

// startedAt is when the pod's Ray process last started: the newest running container start,
// else the pod's creation. A head restarted in place has a newer start than its creation.
func startedAt(p *corev1.Pod) time.Time {
	t := p.CreationTimestamp.Time
	for _, cs := range p.Status.ContainerStatuses {
		if r := cs.State.Running; r != nil && r.StartedAt.After(t) {
			t = r.StartedAt.Time
		}
	}
	return t
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}

// age formats d as kubectl does ("12m", "3h4m"); a negative duration (clock skew) reads "0s".
func age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return duration.HumanDuration(d)
}

func isRayPod(p *corev1.Pod) bool {
	return ray.IsRayPod(p) && p.Labels[ray.LabelCluster] != ""
}
