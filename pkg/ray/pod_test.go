package ray

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestRunningReady(t *testing.T) {
	pod := func(phase corev1.PodPhase, conds ...corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: phase, Conditions: conds}}
	}
	ready := func(s corev1.ConditionStatus) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.PodReady, Status: s}
	}
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}
	for _, c := range []struct {
		name string
		p    *corev1.Pod
		want bool
	}{
		{"running and ready", pod(corev1.PodRunning, scheduled, ready(corev1.ConditionTrue)), true},
		{"running, not ready", pod(corev1.PodRunning, ready(corev1.ConditionFalse)), false},
		{"running, no Ready condition", pod(corev1.PodRunning, scheduled), false},
		{"ready but pending", pod(corev1.PodPending, ready(corev1.ConditionTrue)), false},
		{"ready but failed", pod(corev1.PodFailed, ready(corev1.ConditionTrue)), false},
	} {
		if got := RunningReady(c.p); got != c.want {
			t.Errorf("%s: RunningReady = %v, want %v", c.name, got, c.want)
		}
	}
}
