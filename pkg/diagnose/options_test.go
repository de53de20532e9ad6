package diagnose

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

func TestTerminatingDeadline(t *testing.T) {
	now := fixtureNow
	at := func(d time.Duration) *metav1.Time { ts := metav1.NewTime(now.Add(d)); return &ts }
	pod := func(deletion *metav1.Time) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: deletion}}
	}
	o := DefaultOptions() // margin 1m
	cases := []struct {
		name string
		pods []corev1.Pod
		want time.Duration // from now; 0: none
	}{
		{"no pod terminating", []corev1.Pod{pod(nil)}, 0},
		{"inside its grace period", []corev1.Pod{pod(at(30 * time.Second))}, 90 * time.Second},
		{"grace over, margin not", []corev1.Pod{pod(at(-20 * time.Second))}, 40 * time.Second},
		{"already stuck: nothing left to wait for", []corev1.Pod{pod(at(-2 * time.Minute))}, 0},
		{"the earliest of several", []corev1.Pod{pod(at(time.Minute)), pod(nil), pod(at(10 * time.Second))}, 70 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := TerminatingDeadline(&state.Snapshot{Now: now, Pods: tc.pods}, o)
			if tc.want == 0 {
				if ok {
					t.Fatalf("deadline %s, want none", got)
				}
				return
			}
			if !ok || !got.Equal(now.Add(tc.want)) {
				t.Fatalf("deadline %v (ok %v), want now+%s", got, ok, tc.want)
			}
		})
	}
}
