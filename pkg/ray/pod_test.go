package ray

import (
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func deleting(p *corev1.Pod) *corev1.Pod {
	now := metav1.Now()
	p.DeletionTimestamp = &now
	return p
}

func TestTerminal(t *testing.T) {
	for phase, want := range map[corev1.PodPhase]bool{
		corev1.PodFailed: true, corev1.PodSucceeded: true, corev1.PodRunning: false, corev1.PodPending: false, "": false,
	} {
		if got := Terminal(&corev1.Pod{Status: corev1.PodStatus{Phase: phase}}); got != want {
			t.Errorf("Terminal(phase %q) = %v, want %v", phase, got, want)
		}
	}
}

func TestSuspended(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		suspend *bool
		want    bool
	}{{nil, false}, {&no, false}, {&yes, true}} {
		if got := Suspended(&rayv1.RayCluster{Spec: rayv1.RayClusterSpec{Suspend: c.suspend}}); got != c.want {
			t.Errorf("Suspended(%v) = %v, want %v", c.suspend, got, c.want)
		}
	}
}

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
		{"running and ready, being deleted", deleting(pod(corev1.PodRunning, ready(corev1.ConditionTrue))), false},
	} {
		if got := RunningReady(c.p); got != c.want {
			t.Errorf("%s: RunningReady = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestKubeletEviction(t *testing.T) {
	const low = "The node was low on resource: ephemeral-storage. Threshold quantity: 300Mi, available: 124024Ki. "
	disruption := func(reason, msg string) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason, Message: msg}
	}
	for _, c := range []struct {
		name    string
		st      corev1.PodStatus
		want    bool
		message string
	}{
		{"Failed/Evicted, as seed 000", corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: low}, true, low},
		// A real kubelet 1.34 left this: containers exited 0 on SIGTERM, no reason, only the condition.
		{"Succeeded with the kubelet's DisruptionTarget", corev1.PodStatus{Phase: corev1.PodSucceeded,
			Conditions: []corev1.PodCondition{disruption("TerminationByKubelet", low)}}, true, low},
		{"Failed with the condition and no reason", corev1.PodStatus{Phase: corev1.PodFailed,
			Conditions: []corev1.PodCondition{disruption("TerminationByKubelet", low)}}, true, low},
		{"graceful node shutdown is not an eviction", corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Terminated",
			Conditions: []corev1.PodCondition{disruption("TerminationByKubelet", "Pod was terminated in response to imminent node shutdown.")}}, false, ""},
		{"API eviction deletes, it does not leave a terminal pod", corev1.PodStatus{Phase: corev1.PodSucceeded,
			Conditions: []corev1.PodCondition{disruption("EvictionByEvictionAPI", "Eviction API: evicting")}}, false, ""},
		{"condition on a running pod: the eviction has not finished", corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{disruption("TerminationByKubelet", low)}}, false, ""},
		{"the condition's message empty: the pod's", corev1.PodStatus{Phase: corev1.PodFailed, Message: low,
			Conditions: []corev1.PodCondition{disruption("TerminationByKubelet", "")}}, true, low},
		{"Succeeded by itself", corev1.PodStatus{Phase: corev1.PodSucceeded}, false, ""},
	} {
		msg, got := KubeletEviction(&corev1.Pod{Status: c.st})
		if got != c.want || msg != strings.TrimSpace(c.message) {
			t.Errorf("%s: KubeletEviction = %q, %v; want %q, %v", c.name, msg, got, strings.TrimSpace(c.message), c.want)
		}
	}
}

// The mark is the pod as it is now: the kubelet's condition on a pod whose containers still stop
// is already the eviction (chaos disk-pressure's timeline reads it so); a node shutdown is not.
func TestKubeletEvictionMark(t *testing.T) {
	cond := func(msg string) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet", Message: msg}
	}
	running := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{cond("The node was low on resource: memory. ")}}
	if msg, ok := KubeletEvictionMark(&corev1.Pod{Status: running}); !ok || msg != "The node was low on resource: memory." {
		t.Errorf("a running pod with the kubelet's condition: %q, %v", msg, ok)
	}
	shutdown := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{cond("Pod was terminated in response to imminent node shutdown.")}}
	if _, ok := KubeletEvictionMark(&corev1.Pod{Status: shutdown}); ok {
		t.Errorf("a node shutdown is not an eviction")
	}
}
