package pressure

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTimelineEvictedHeadReplaced(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	tl := &Timeline{Start: t0, Pod: "raycluster-demo-head-x7k2p", Node: "node-a", Container: "kubectl-ray-disk-pressure-abcde", Head: true}
	tl.Injected()
	pod := headPod()
	pod.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: tl.Container, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	tl.ObservePod(pod, false, t0.Add(2*time.Second))
	tl.ObservePod(pod, false, t0.Add(3*time.Second)) // repeated state adds nothing
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: "node.kubernetes.io/disk-pressure", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue}, {Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	tl.ObserveNode(node, t0.Add(20*time.Second))
	pod.Status.Phase, pod.Status.Reason, pod.Status.Message = corev1.PodFailed, "Evicted", "The node was low on resource: ephemeral-storage. " // the kubelet ends it with a space
	tl.ObservePod(pod, false, t0.Add(31*time.Second))
	if tl.Done() {
		t.Fatal("done before a replacement")
	}
	repl := headPod()
	repl.Name, repl.Spec.NodeName, repl.Status.Phase = "raycluster-demo-head-9fz4q", "node-b", corev1.PodPending
	tl.ObservePod(repl, false, t0.Add(40*time.Second))
	repl.Status.Phase = corev1.PodRunning
	tl.ObservePod(repl, false, t0.Add(45*time.Second))
	if !tl.Done() {
		t.Fatal("not done after the replacement runs")
	}
	verdict, ok := tl.Verdict(10 * time.Minute)
	got := strings.Join(append(tl.Lines(), verdict), "\n")
	want := `   +0s  injected kubectl-ray-disk-pressure-abcde into pod raycluster-demo-head-x7k2p on node node-a
   +2s  kubectl-ray-disk-pressure-abcde started
  +20s  pressure seen on node node-a: DiskPressure=True
  +20s  node node-a tainted node.kubernetes.io/disk-pressure:NoSchedule
  +31s  pod raycluster-demo-head-x7k2p evicted: The node was low on resource: ephemeral-storage.
  +40s  replacement head raycluster-demo-head-9fz4q created
  +45s  replacement head raycluster-demo-head-9fz4q Running on node node-b
the cluster came back: head raycluster-demo-head-9fz4q Running 14s after the eviction`
	if got != want || !ok {
		t.Errorf("got (ok=%v):\n%s\nwant:\n%s", ok, got, want)
	}
}

func TestTimelineEvictedHeadNotReplaced(t *testing.T) {
	t0 := time.Now()
	tl := &Timeline{Start: t0, Pod: "raycluster-demo-head-x7k2p", Node: "node-a", Container: "c", Head: true}
	pod := headPod()
	pod.Status.Phase, pod.Status.Reason = corev1.PodFailed, "Evicted"
	tl.ObservePod(pod, false, t0.Add(time.Second))
	verdict, ok := tl.Verdict(time.Minute)
	if ok || tl.Done() || !strings.HasPrefix(verdict, "the cluster did not come back within 1m0s: evicted head raycluster-demo-head-x7k2p was not replaced") {
		t.Errorf("got %q ok=%v done=%v", verdict, ok, tl.Done())
	}
}

// The container ending without an eviction: pressure that ran is a result ("no eviction"); a
// script that refused or failed (not enough free space, no shared process namespace, dd failing)
// applied no pressure, which is no result, and the run fails instead of reading "no eviction".
func TestTimelineContainerEndedWithoutEviction(t *testing.T) {
	for _, c := range []struct {
		code   int32
		reason string
		ok     bool
		want   string
	}{
		{0, "Completed", true, "no eviction: c ended and pod raycluster-demo-head-x7k2p is still Running"},
		{2, "Error", false, "the pressure did not run as asked: c exited with code 2 (Error) and pod raycluster-demo-head-x7k2p is still Running; its log says why: kubectl logs raycluster-demo-head-x7k2p -c c"},
	} {
		t0 := time.Now()
		tl := &Timeline{Start: t0, Pod: "raycluster-demo-head-x7k2p", Container: "c", Head: true}
		pod := headPod()
		pod.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: c.code, Reason: c.reason}}}}
		tl.ObservePod(pod, false, t0.Add(2*time.Minute))
		verdict, ok := tl.Verdict(time.Minute)
		if !tl.Done() || ok != c.ok || verdict != c.want {
			t.Errorf("exit %d: got %q ok=%v done=%v, want %q ok=%v", c.code, verdict, ok, tl.Done(), c.want, c.ok)
		}
	}
}

// A container that never started (its image cannot be pulled) applied no pressure either.
func TestTimelineContainerNeverStartedIsNoResult(t *testing.T) {
	t0 := time.Now()
	tl := &Timeline{Start: t0, Pod: "raycluster-demo-head-x7k2p", Container: "c", Head: true}
	pod := headPod()
	pod.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}
	tl.ObservePod(pod, false, t0.Add(3*time.Second))
	verdict, ok := tl.Verdict(time.Minute)
	if ok || !strings.HasPrefix(verdict, "the pressure never started: c did not run within 1m0s") {
		t.Errorf("got %q ok=%v", verdict, ok)
	}
}
