package pressure

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const evictMsg = "The node was low on resource: ephemeral-storage. Threshold quantity: 300Mi, available: 152060Ki."

// workerTimeline is a run on a worker (or pod/NAME): the eviction ends it.
func workerTimeline(t0 time.Time) *Timeline {
	return &Timeline{Start: t0, Namespace: "ml", Pod: "raycluster-demo-head-x7k2p", UID: "uid-target", Node: "node-a", Container: "c"}
}

func target() *corev1.Pod {
	p := headPod()
	p.UID = "uid-target"
	return p
}

// disruptionTarget is the condition the kubelet writes with the terminal phase of a pod it evicts.
func disruptionTarget(msg string) corev1.PodCondition {
	return corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonTerminationByKubelet, Message: msg}
}

// kubeletEvicted is the Event the kubelet's eviction manager records before it kills the pod.
func kubeletEvicted(ns, name string, uid types.UID, node string) *corev1.Event {
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + ".1"}, Reason: "Evicted", Type: corev1.EventTypeWarning, Message: evictMsg,
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: name, UID: uid, APIVersion: "v1"},
		Source:         corev1.EventSource{Component: "kubelet", Host: node}}
}

func lastEvent(t *testing.T, tl *Timeline) string {
	t.Helper()
	ev := tl.Events()
	if len(ev) == 0 {
		t.Fatal("no events")
	}
	return ev[len(ev)-1].Message
}

// A pod whose containers exit 0 on SIGTERM ends Succeeded, with no Evicted reason: the
// DisruptionTarget condition is the mark of the eviction.
func TestTimelineSucceededWithDisruptionTargetIsEvicted(t *testing.T) {
	t0 := time.Now()
	tl := workerTimeline(t0)
	p := target()
	p.Status.Phase = corev1.PodSucceeded
	p.Status.Conditions = append(p.Status.Conditions, disruptionTarget(evictMsg))
	tl.ObservePod(p, false, t0.Add(7*time.Second))
	v := tl.result(time.Minute)
	if !tl.Done() || v.Outcome != OutcomeEvicted || !v.Passed {
		t.Fatalf("done %v verdict %+v", tl.Done(), v)
	}
	if got, want := lastEvent(t, tl), "pod raycluster-demo-head-x7k2p evicted (it ended Succeeded): "+evictMsg; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}

// The kubelet's Evicted Event alone is the eviction: on a pod still Running (being killed), or on
// one that then ends Succeeded with no other mark.
func TestTimelineKubeletEventIsEvicted(t *testing.T) {
	t0 := time.Now()
	tl := workerTimeline(t0)
	tl.ObservePod(target(), false, t0.Add(time.Second))
	tl.ObserveEvent(kubeletEvicted("ml", tl.Pod, "uid-target", "node-a"), t0.Add(3*time.Second))
	if !tl.Done() || tl.result(time.Minute).Outcome != OutcomeEvicted {
		t.Fatalf("done %v verdict %+v", tl.Done(), tl.result(time.Minute))
	}
	if got := lastEvent(t, tl); got != "pod raycluster-demo-head-x7k2p evicted: "+evictMsg {
		t.Errorf("line %q", got)
	}

	// Seen Succeeded first, the Event within EvidenceGrace: evicted, not "ended".
	tl = workerTimeline(t0)
	p := target()
	p.Status.Phase = corev1.PodSucceeded
	tl.ObservePod(p, false, t0.Add(5*time.Second))
	tl.Tick(t0.Add(8 * time.Second))
	if tl.Done() {
		t.Fatal("done before EvidenceGrace passed")
	}
	tl.ObserveEvent(kubeletEvicted("ml", tl.Pod, "uid-target", "node-a"), t0.Add(9*time.Second))
	tl.Tick(t0.Add(20 * time.Second))
	if v := tl.result(time.Minute); !tl.Done() || v.Outcome != OutcomeEvicted {
		t.Errorf("done %v verdict %+v", tl.Done(), v)
	}
}

// Events that are not the kubelet's eviction of this pod are not its eviction.
func TestTimelineOtherEventsAreNotTheEviction(t *testing.T) {
	t0 := time.Now()
	tl := workerTimeline(t0)
	older := kubeletEvicted("ml", tl.Pod, "uid-older-pod-of-that-name", "node-a")
	other := kubeletEvicted("ml", tl.Pod, "uid-target", "node-a")
	other.Source, other.Reason = corev1.EventSource{Component: "taint-eviction-controller"}, "TaintManagerEviction"
	otherNS := kubeletEvicted("dev", tl.Pod, "", "node-b")
	for _, ev := range []*corev1.Event{older, other, otherNS} {
		tl.ObserveEvent(ev, t0.Add(time.Second))
	}
	if tl.Done() || len(tl.Events()) != 0 {
		t.Errorf("taken as an eviction: %v", tl.Lines())
	}
}

// Succeeded with no mark at all, for EvidenceGrace: the pod ended, and the verdict says it was
// not seen evicted (outcome pod-ended), instead of waiting out the timeout for "no eviction".
func TestTimelineSucceededWithoutMarkEnds(t *testing.T) {
	t0 := time.Now()
	tl := workerTimeline(t0)
	p := target()
	p.Status.Phase = corev1.PodSucceeded
	tl.ObservePod(p, false, t0.Add(5*time.Second))
	tl.Tick(t0.Add(5*time.Second + EvidenceGrace))
	v := tl.result(time.Minute)
	if !tl.Done() || v.Outcome != OutcomePodEnded || !v.Passed ||
		v.Message != "pod raycluster-demo-head-x7k2p ended Succeeded with no mark of an eviction" {
		t.Fatalf("done %v verdict %+v", tl.Done(), v)
	}
	ev := tl.Events()
	if len(ev) != 1 || !ev[0].At.Equal(t0.Add(5*time.Second)) || !strings.HasPrefix(ev[0].Message, "pod raycluster-demo-head-x7k2p ended Succeeded with no mark of an eviction") {
		t.Errorf("events %+v", ev)
	}
}

// The node's other pods the kubelet evicts are bystanders, from their status or its Event; pods
// that had ended before the run, of another node, or the target itself are not.
func TestTimelineBystanders(t *testing.T) {
	t0 := time.Now()
	tl := &Timeline{Start: t0, Namespace: "ml", Pod: "raycluster-demo-head-x7k2p", UID: "uid-target", Node: "node-a", Container: "c", Head: true,
		EndedBefore: map[types.UID]bool{"uid-old": true}}
	pod := func(ns, name string, uid types.UID, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: evictMsg + " "}}
	}
	web := pod("default", "web-0", "uid-web", "node-a")
	tl.ObserveNodePod(web, false, t0.Add(4*time.Second))
	tl.ObserveNodePod(web, false, t0.Add(5*time.Second)) // again: nothing new
	succeeded := pod("batch", "job-x", "uid-job", "node-a")
	succeeded.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, Conditions: []corev1.PodCondition{disruptionTarget(evictMsg)}}
	tl.ObserveNodePod(succeeded, false, t0.Add(5*time.Second))
	tl.ObserveEvent(kubeletEvicted("ml", "raycluster-demo-worker-q", "uid-w", "node-a"), t0.Add(6*time.Second))
	tl.ObserveNodePod(pod("default", "old", "uid-old", "node-a"), false, t0.Add(6*time.Second))
	tl.ObserveNodePod(pod("default", "elsewhere", "uid-e", "node-b"), false, t0.Add(6*time.Second))
	tl.ObserveEvent(kubeletEvicted("default", "elsewhere", "uid-e", "node-b"), t0.Add(6*time.Second))
	completed := pod("batch", "done", "uid-done", "node-a")
	completed.Status = corev1.PodStatus{Phase: corev1.PodSucceeded}
	tl.ObserveNodePod(completed, false, t0.Add(6*time.Second))
	evictedTarget := target()
	evictedTarget.Status.Phase, evictedTarget.Status.Reason, evictedTarget.Status.Message = corev1.PodFailed, "Evicted", evictMsg
	tl.ObserveNodePod(evictedTarget, false, t0.Add(7*time.Second)) // the target's watch has it
	tl.ObservePod(evictedTarget, false, t0.Add(7*time.Second))

	want := []string{
		"   +4s  bystander pod default/web-0 on node node-a evicted: " + evictMsg,
		"   +5s  bystander pod batch/job-x on node node-a evicted: " + evictMsg,
		"   +6s  bystander pod ml/raycluster-demo-worker-q on node node-a evicted: " + evictMsg,
		"   +7s  pod raycluster-demo-head-x7k2p evicted: " + evictMsg,
	}
	if got := strings.Join(tl.Lines(), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	v := tl.result(time.Minute)
	if want := "; bystanders the kubelet evicted on node node-a: default/web-0, batch/job-x, ml/raycluster-demo-worker-q"; !strings.HasSuffix(v.Message, want) || v.Outcome != OutcomeNotReplaced {
		t.Errorf("verdict %+v, want it to end %q", v, want)
	}
}

// A script that failed says why in its last log line, which the kubelet copies into the
// container's terminated message: the verdict shows it, with the command that shows the rest.
func TestTimelinePressureFailedSaysWhy(t *testing.T) {
	t0 := time.Now()
	tl := workerTimeline(t0)
	p := target()
	p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 1, Reason: "Error",
		Message: "c: allocating 2147483648 bytes (8 holders of at most 268435456 bytes each)\ntail: out of memory\nc: released memory\nc: allocation failed: memory holder 3 of 8 (tail, pid 41) exited with status 1; its share is not held, so nothing is\n"}}}}
	tl.ObservePod(p, false, t0.Add(9*time.Second))
	v := tl.result(time.Minute)
	want := "the pressure did not run as asked: c exited with code 1 (Error) and pod raycluster-demo-head-x7k2p is still Running; it said: allocation failed: memory holder 3 of 8 (tail, pid 41) exited with status 1; its share is not held, so nothing is; its log: kubectl logs -n ml raycluster-demo-head-x7k2p -c c"
	if !tl.Done() || v.Passed || v.Outcome != OutcomePressureFailed || v.Message != want {
		t.Errorf("done %v verdict %+v\nwant %s", tl.Done(), v, want)
	}
}
