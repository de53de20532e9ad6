package e2e

// Seed 000 reproduced with `kubectl ray chaos disk-pressure --watch-eviction` (and
// memory-pressure), end to end.
//
// Who plays what (no container runs in the sandbox):
//   - the kubelet starting our ephemeral container and, after a delay, evicting the pod for
//     ephemeral-storage (memory): kwok Stages created by the test, scoped to its namespace
//     (play.KubeletPressureStagesYAML);
//   - the kubelet's eviction manager setting DiskPressure (MemoryPressure) on the node once the
//     container runs, and clearing it once the evicted pod's disk (memory) is reclaimed:
//     kubeletPressure, on a node of the test's own.
// The KubeRay operator, the scheduler and the controllers are real: the node lifecycle
// controller adds and removes the disk-pressure (memory-pressure) taint.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// evictionDelay is how long after our container starts the Stage evicts the pod; the node's
// DiskPressure is played well within it, so the timeline's order is fixed.
const evictionDelay = 6 * time.Second

// pressureKind is what a pressure run fills, and how the kubelet answers it.
type pressureKind struct {
	command   string   // disk-pressure, memory-pressure
	args      []string // how much
	container string   // prefix of our ephemeral container's name
	condition play.Pressure
	resource  string // in the eviction message
}

var (
	diskPressure = pressureKind{"disk-pressure", []string{"--percent", "95"}, "kubectl-ray-disk-pressure-", play.DiskPressure, "ephemeral-storage"}
	memPressure  = pressureKind{"memory-pressure", []string{"--bytes", "64Mi"}, "kubectl-ray-memory-pressure-", play.MemoryPressure, "memory"}
)

// pressureRun sets up a RayCluster pinned to the test's own node with the Stages in place, runs
// disk-pressure (memory-pressure) --watch-eviction against its head, plays the node's
// DiskPressure (MemoryPressure) once the container runs and lifts it after the eviction. It
// returns the command's result, the evicted head, the node, the container's name and the line
// the run prints about the other pods of the node (the cluster's workers).
func pressureRun(t *testing.T, h *H, kind pressureKind, cluster, timeout string) (Result, corev1.Pod, string, string, string) {
	t.Helper()
	node := pressureNode(h)
	createPressureStages(h, evictionDelay)
	h.CreateRayCluster(cluster, func(rc *rayv1.RayCluster) { pinCluster(rc, node) })
	head := h.WaitClusterRunning(cluster, 90*time.Second)
	if head.Spec.NodeName != node {
		t.Fatalf("head %s runs on %s, not on the test's node %s", head.Name, head.Spec.NodeName, node)
	}

	warning := nodeWarning(h, head)
	args := append(append([]string{"chaos", kind.command, cluster}, kind.args...), "--watch-eviction", "--timeout", timeout, "--yes")
	done := h.start(args...)

	// The kubelet's part: the container runs (Stage), the node's disk (memory) fills: pressure.
	ecName := waitOurs(h, head.Name, kind.container)
	kubeletPressure(h, node, kind.condition, true)

	// The Stage evicts the head; the kubelet reclaims its disk (memory) and lifts the pressure.
	// A watch, not polling: KubeRay v1.5.0 deletes the evicted head within milliseconds.
	evicted := waitPodFailed(t, h, head)
	kubeletPressure(h, node, kind.condition, false)

	var res Result
	select {
	case res = <-done:
	case <-h.Ctx.Done():
		t.Fatalf("%s --watch-eviction did not end", kind.command)
	}
	t.Logf("%s --watch-eviction: %s", kind.command, res)
	return res, evicted, node, ecName, warning
}

// waitPodFailed watches pod from the version seen until it is Failed, and returns it then.
func waitPodFailed(t *testing.T, h *H, pod corev1.Pod) corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(h.Ctx, 60*time.Second)
	defer cancel()
	w, err := h.Kube.CoreV1().Pods(h.NS).Watch(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + pod.Name, ResourceVersion: pod.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if p, ok := ev.Object.(*corev1.Pod); ok && p.Status.Phase == corev1.PodFailed {
			return *p
		}
	}
	t.Fatalf("pod %s was not seen Failed within 60s", pod.Name)
	return corev1.Pod{}
}

// assertEvicted checks what the Stage wrote is the kubelet's node-pressure eviction.
func assertEvicted(t *testing.T, kind pressureKind, p corev1.Pod) {
	t.Helper()
	if p.Status.Phase != corev1.PodFailed || p.Status.Reason != "Evicted" ||
		!strings.HasPrefix(p.Status.Message, "The node was low on resource: "+kind.resource+".") {
		t.Errorf("head %s: phase %s reason %q message %q, want Failed/Evicted for %s", p.Name, p.Status.Phase, p.Status.Reason, p.Status.Message, kind.resource)
	}
	found := false
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == "TerminationByKubelet" {
			found = true
		}
	}
	if !found {
		t.Errorf("head %s has no DisruptionTarget=True (TerminationByKubelet) condition: %+v", p.Name, p.Status.Conditions)
	}
}

// timelineHead is the part of the timeline both operator versions share.
func timelineHead(h *H, head corev1.Pod, node, ec string) []string {
	return []string{
		fmt.Sprintf("injected %s into pod %s/%s (target container ray-head, node disk: 95%% of the free space of the node's container filesystem, measured when the container starts, for 2m0s); its log: kubectl logs -n %s %s -c %s",
			ec, h.NS, head.Name, h.NS, head.Name, ec),
		fmt.Sprintf("+T  injected %s into pod %s on node %s", ec, head.Name, node),
		fmt.Sprintf("+T  %s started", ec),
		fmt.Sprintf("+T  pressure seen on node %s: DiskPressure=True (kubelet has disk pressure)", node),
		fmt.Sprintf("+T  node %s tainted node.kubernetes.io/disk-pressure:NoSchedule", node),
		// The Stage, as the real kubelet, puts our running container back to waiting
		// ContainerCreating: no exit is seen.
		fmt.Sprintf("+T  pod %s evicted: %s", head.Name, strings.TrimSpace(head.Status.Message)),
	}
}

func assertLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n--- got\n%s\n--- want\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// KubeRay v1.1.1: the evicted head stays; --watch-eviction says so and exits 1; doctor finds
// head-evicted; heal deletes it and the operator creates a new head.
func TestPressureEvictionKubeRayV111(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	res, head, node, ec, warning := pressureRun(t, h, diskPressure, "evict", "20s")
	assertEvicted(t, diskPressure, head)
	want := append(timelineHead(h, head, node, ec),
		fmt.Sprintf("the cluster did not come back within 20s: evicted head %s was not replaced (KubeRay before v1.2.0 never replaces it; see kubectl ray doctor and kubectl ray heal)", head.Name))
	if res.Code != 1 || res.Stderr != warning || warning == "" {
		t.Errorf("want exit 1 and on stderr only the node's other pods (%q), got %s", warning, res)
	}
	assertLines(t, "--watch-eviction timeline", timelineLines(res.Stdout), want)
	if heads := h.Pods("evict", "head"); len(heads) != 1 || heads[0].Name != head.Name {
		t.Fatalf("KubeRay v1.1.1 should leave the evicted head %s alone, heads now: %v", head.Name, podNames(heads))
	}

	// doctor sees the evicted head.
	doc := h.Run("doctor", "evict", "-o", "json")
	var report struct {
		Findings []struct {
			Rule   string
			Object struct{ Kind, Namespace, Name string }
		}
	}
	if err := json.Unmarshal([]byte(doc.Stdout), &report); err != nil {
		t.Fatalf("doctor -o json: %v\n%s", err, doc)
	}
	var rules []string
	found := false
	for _, f := range report.Findings {
		rules = append(rules, f.Rule)
		if f.Rule == "head-evicted" && f.Object.Kind == "Pod" && f.Object.Name == head.Name {
			found = true
		}
	}
	if doc.Code != 1 || !found {
		t.Errorf("doctor: want exit 1 with head-evicted on pod %s, got rules %v and %s", head.Name, rules, doc)
	}
	t.Logf("doctor: %s", h.Run("doctor", "evict"))

	// heal replaces it (the operator creates the new head once heal deleted the evicted one).
	heal := h.Run("heal", "evict", "--yes", "--timeout", "90s")
	if heal.Code != 0 {
		t.Fatalf("heal: %s", heal)
	}
	t.Logf("heal: %s", heal)
	newHead := h.WaitClusterRunning("evict", 90*time.Second)
	if newHead.Name == head.Name || newHead.Spec.NodeName != node {
		t.Fatalf("after heal: head %s on %s (evicted was %s)", newHead.Name, newHead.Spec.NodeName, head.Name)
	}
	if ec := h.ephemeralOf(newHead.Name); len(ec) != 0 {
		t.Errorf("the new head carries ephemeral containers: %+v", ec)
	}
	if doc := h.Run("doctor", "evict"); doc.Code != 0 {
		t.Errorf("doctor after heal: %s", doc)
	}
}

// KubeRay v1.5.0 replaces the evicted head itself; --watch-eviction reports it and exits 0.
func TestPressureEvictionKubeRayV150(t *testing.T) {
	t.Parallel()
	h := newHOn(t, sandboxV150(t))
	res, head, node, ec, warning := pressureRun(t, h, diskPressure, "evict", "90s")
	assertEvicted(t, diskPressure, head)
	if res.Code != 0 || res.Stderr != warning || warning == "" {
		t.Errorf("want exit 0 and on stderr only the node's other pods (%q), got %s", warning, res)
	}
	heads := h.Pods("evict", "head")
	if len(heads) != 1 || heads[0].Name == head.Name {
		t.Fatalf("want one new head, got %v", podNames(heads))
	}
	newHead := heads[0].Name
	got := timelineLines(res.Stdout)
	// Whether the watch sees the old head's deletion complete before the new head runs (which
	// ends the watch) depends on the operator's and kwok's timing: the line may be there, but
	// only after the eviction.
	deleted := fmt.Sprintf("+T  pod %s deleted", head.Name)
	var rest []string
	for i, l := range got {
		if l == deleted {
			if i < len(timelineHead(h, head, node, ec)) {
				t.Errorf("%q before the eviction", l)
			}
			continue
		}
		rest = append(rest, l)
	}
	want := append(timelineHead(h, head, node, ec),
		fmt.Sprintf("+T  replacement head %s created", newHead),
		fmt.Sprintf("+T  replacement head %s Running on node %s", newHead, node),
		fmt.Sprintf("the cluster came back: head %s Running T after the eviction", newHead))
	assertLines(t, "--watch-eviction timeline", rest, want)
}

// memory-pressure --watch-eviction on KubeRay v1.1.1: the kubelet's memory eviction (played by
// the memory Stage) leaves the head Failed/Evicted for good, as seed 000 describes; the timeline
// says so and exits 1, and heal brings the cluster back.
func TestMemoryPressureEvictionKubeRayV111(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	res, head, node, ec, warning := pressureRun(t, h, memPressure, "evictmem", "20s")
	assertEvicted(t, memPressure, head)
	want := []string{
		fmt.Sprintf("injected %s into pod %s/%s (target container ray-head, memory: 64Mi, for 2m0s); its log: kubectl logs -n %s %s -c %s",
			ec, h.NS, head.Name, h.NS, head.Name, ec),
		fmt.Sprintf("+T  injected %s into pod %s on node %s", ec, head.Name, node),
		fmt.Sprintf("+T  %s started", ec),
		fmt.Sprintf("+T  pressure seen on node %s: MemoryPressure=True (kubelet has insufficient memory available)", node),
		fmt.Sprintf("+T  node %s tainted node.kubernetes.io/memory-pressure:NoSchedule", node),
		fmt.Sprintf("+T  pod %s evicted: %s", head.Name, strings.TrimSpace(head.Status.Message)),
		fmt.Sprintf("the cluster did not come back within 20s: evicted head %s was not replaced (KubeRay before v1.2.0 never replaces it; see kubectl ray doctor and kubectl ray heal)", head.Name),
	}
	if res.Code != 1 || res.Stderr != warning || warning == "" {
		t.Errorf("want exit 1 and on stderr only the node's other pods (%q), got %s", warning, res)
	}
	assertLines(t, "--watch-eviction timeline", timelineLines(res.Stdout), want)
	if heads := h.Pods("evictmem", "head"); len(heads) != 1 || heads[0].Name != head.Name {
		t.Fatalf("KubeRay v1.1.1 should leave the evicted head %s alone, heads now: %v", head.Name, podNames(heads))
	}
	if heal := h.Run("heal", "evictmem", "--yes", "--timeout", "90s"); heal.Code != 0 {
		t.Fatalf("heal: %s", heal)
	}
	if newHead := h.WaitClusterRunning("evictmem", 90*time.Second); newHead.Name == head.Name {
		t.Fatalf("after heal the head is still %s", head.Name)
	}
}

// kubeletEvictedSucceeded plays what a real kubelet wrote when it evicted a pod whose containers
// exit 0 on SIGTERM (the sandbox has no kubelet; ../shared/facts/real-node.md): its Evicted
// Warning Event on the pod, recorded before the kill, then the pod Succeeded with no Evicted
// reason, its containers Completed, our running ephemeral container back to waiting
// ContainerCreating. withCondition adds the DisruptionTarget condition (TerminationByKubelet); the
// Event is recorded only without it, so each test has one mark of the eviction alone.
func kubeletEvictedSucceeded(h *H, pod corev1.Pod, node string, withCondition bool) {
	h.T.Helper()
	msg := play.EvictionMessage("ephemeral-storage")
	now := metav1.Now()
	if !withCondition {
		ev := &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: fmt.Sprintf("%s.%x", pod.Name, now.UnixNano())},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
				ResourceVersion: pod.ResourceVersion},
			Reason: "Evicted", Message: msg, Type: corev1.EventTypeWarning, Count: 1,
			Source:         corev1.EventSource{Component: "kubelet", Host: node},
			FirstTimestamp: now, LastTimestamp: now, ReportingController: "kubelet", ReportingInstance: node,
		}
		if _, err := h.Kube.CoreV1().Events(pod.Namespace).Create(h.Ctx, ev, metav1.CreateOptions{}); err != nil {
			h.T.Fatal(err)
		}
	}
	p, err := h.Kube.CoreV1().Pods(pod.Namespace).Get(h.Ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodSucceeded, "", ""
	var conds []corev1.PodCondition
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			c.Status, c.Reason, c.LastTransitionTime = corev1.ConditionFalse, "PodCompleted", now
		}
		conds = append(conds, c)
	}
	if withCondition {
		conds = append(conds, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: corev1.PodReasonTerminationByKubelet, Message: msg, LastTransitionTime: now})
	}
	p.Status.Conditions = conds
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		cs.Ready, cs.Started = false, new(bool)
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}}
	}
	for i := range p.Status.EphemeralContainerStatuses {
		cs := &p.Status.EphemeralContainerStatuses[i]
		cs.RestartCount++
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "ContainerStatusUnknown",
			Message: "The container could not be located when the pod was deleted.  The container used to be Running"}}
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	}
	if _, err := h.Kube.CoreV1().Pods(pod.Namespace).UpdateStatus(h.Ctx, p, metav1.UpdateOptions{}); err != nil {
		h.T.Fatal(err)
	}
}

// An eviction that leaves the pod Succeeded (its containers exit 0 on SIGTERM) is recognised by
// its one mark, the kubelet's Evicted Event or the DisruptionTarget condition, at once: exit 0,
// "was evicted", long before --timeout. (It used to wait out the timeout and say "no eviction".)
// Played: the start Stage, and the kubelet's eviction (kubeletEvictedSucceeded); the eviction
// Stages are given 10 minutes, so they never act.
func TestPressureEvictedSucceeded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		withCondition bool
		how           string
	}{{"event", false, "evicted"}, {"condition", true, "evicted (it ended Succeeded)"}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := NewH(t)
			node := pressureNode(h)
			createPressureStages(h, 10*time.Minute)
			h.CreateRayCluster("succ", func(rc *rayv1.RayCluster) { pinCluster(rc, node) })
			h.WaitClusterRunning("succ", 90*time.Second)
			worker := h.Pods("succ", "worker")[0]
			warning := nodeWarning(h, worker)
			done := h.start("chaos", "disk-pressure", "succ", "--role", "worker", "--size", "1Gi", "--watch-eviction", "--timeout", "90s", "--yes")
			ec := waitOurs(h, worker.Name, diskPressure.container)
			played := time.Now()
			kubeletEvictedSucceeded(h, worker, node, c.withCondition)
			var res Result
			select {
			case res = <-done:
			case <-h.Ctx.Done():
				t.Fatal("--watch-eviction did not end")
			}
			if took := time.Since(played); took > 30*time.Second {
				t.Errorf("recognised %s after the eviction: it waited for --timeout", took)
			}
			if res.Code != 0 || res.Stderr != warning {
				t.Errorf("want exit 0 and on stderr only the node's other pods (%q), got %s", warning, res)
			}
			var got []string
			for _, l := range timelineLines(res.Stdout) {
				// KubeRay may delete the ended worker before the run's last read: not asserted.
				if l != fmt.Sprintf("+T  pod %s deleted", worker.Name) {
					got = append(got, l)
				}
			}
			assertLines(t, "--watch-eviction timeline", got, []string{
				fmt.Sprintf("injected %s into pod %s/%s (target container ray-worker, node disk: 1Gi, for 2m0s); its log: kubectl logs -n %s %s -c %s",
					ec, h.NS, worker.Name, h.NS, worker.Name, ec),
				fmt.Sprintf("+T  injected %s into pod %s on node %s", ec, worker.Name, node),
				fmt.Sprintf("+T  %s started", ec),
				fmt.Sprintf("+T  pod %s %s: %s", worker.Name, c.how, strings.TrimSpace(play.EvictionMessage("ephemeral-storage"))),
				fmt.Sprintf("pod %s was evicted", worker.Name),
			})
		})
	}
}

// The kubelet may evict a bystander first (its usage stats lag the fill by about 10 s): the run
// names it as such in the timeline, the verdict and the report, besides the head. Played: the
// Stages (the head evicted 6 s after our container runs), the node's DiskPressure, and the
// kubelet evicting the idle pod web-0 on the same node first (play.KubeletEvict).
func TestPressureBystanderEvicted(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	node := pressureNode(h)
	createPressureStages(h, evictionDelay)
	h.CreateRayCluster("bys", func(rc *rayv1.RayCluster) { pinCluster(rc, node) })
	head := h.WaitClusterRunning("bys", 90*time.Second)
	plainPod(h, "web-0", node)
	warning := nodeWarning(h, head)
	if !strings.Contains(warning, h.NS+"/web-0") {
		t.Fatalf("web-0 is not on the head's node: %q", warning)
	}
	done := h.start("chaos", "disk-pressure", "bys", "--percent", "95", "--watch-eviction", "--timeout", "20s", "--yes", "-o", "json")
	ec := waitOurs(h, head.Name, diskPressure.container)
	web, err := play.KubeletEvict(h.Ctx, h.Kube, h.NS, "web-0", "ephemeral-storage")
	if err != nil {
		t.Fatal(err)
	}
	kubeletPressure(h, node, play.DiskPressure, true)
	evicted := waitPodFailed(t, h, head)
	kubeletPressure(h, node, play.DiskPressure, false)
	var res Result
	select {
	case res = <-done:
	case <-h.Ctx.Done():
		t.Fatal("--watch-eviction did not end")
	}
	msg := strings.TrimSpace(web.Status.Message)
	if res.Code != 1 {
		t.Errorf("want exit 1 (KubeRay v1.1.1 leaves the evicted head), got %s", res)
	}
	// stderr: the node's other pods, then the injection and the timeline (stdout is the report).
	if !strings.HasPrefix(res.Stderr, warning) || !strings.Contains(res.Stderr, fmt.Sprintf("  bystander pod %s/web-0 on node %s evicted: %s\n", h.NS, node, msg)) ||
		!strings.Contains(res.Stderr, fmt.Sprintf("  pod %s evicted: %s\n", head.Name, strings.TrimSpace(evicted.Status.Message))) {
		t.Errorf("stderr:\n%s", res.Stderr)
	}
	var report struct {
		Eviction struct {
			Pods []struct {
				Namespace, Pod, Message string
				Bystander               bool
			}
		}
		Verdict struct {
			Passed           bool
			Outcome, Message string
		}
	}
	if err := json.Unmarshal([]byte(res.Stdout), &report); err != nil {
		t.Fatalf("-o json: %v\n%s", err, res.Stdout)
	}
	pods := report.Eviction.Pods
	if len(pods) != 2 || pods[0].Namespace != h.NS || pods[0].Pod != "web-0" || !pods[0].Bystander || pods[0].Message != msg ||
		pods[1].Pod != head.Name || pods[1].Bystander {
		t.Errorf("eviction.pods: %+v", pods)
	}
	wantVerdict := fmt.Sprintf("the cluster did not come back within 20s: evicted head %s was not replaced (KubeRay before v1.2.0 never replaces it; see kubectl ray doctor and kubectl ray heal); bystanders the kubelet evicted on node %s: %s/web-0", head.Name, node, h.NS)
	if report.Verdict.Passed || report.Verdict.Outcome != "not-replaced" || report.Verdict.Message != wantVerdict {
		t.Errorf("verdict %+v\nwant message %s", report.Verdict, wantVerdict)
	}
	if !strings.Contains(res.Stderr, fmt.Sprintf("  injected %s into pod %s on node %s\n", ec, head.Name, node)) {
		t.Errorf("stderr lacks the injection:\n%s", res.Stderr)
	}
}

// A memory-pressure container that could not hold its bytes (busybox 1.35's tail at 2 GiB) exits
// 1 with the reason as its last log line, which the kubelet copies into the terminated message
// (FallbackToLogsOnError): --watch-eviction fails (exit 1) and quotes it. Played: the start Stage,
// then the kubelet reporting our container terminated while the pod runs on.
func TestPressureFailedSaysWhy(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	node := pressureNode(h)
	createPressureStages(h, 10*time.Minute)
	h.CreateRayCluster("oom", func(rc *rayv1.RayCluster) { pinCluster(rc, node) })
	h.WaitClusterRunning("oom", 90*time.Second)
	worker := h.Pods("oom", "worker")[0]
	done := h.start("chaos", "memory-pressure", "oom", "--role", "worker", "--bytes", "2Gi", "--watch-eviction", "--timeout", "90s", "--yes")
	ec := waitOurs(h, worker.Name, memPressure.container)
	said := "allocation failed: memory holder 8 of 8 (tail, pid 57) exited with status 1; its share is not held, so nothing is"
	p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, worker.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Status.EphemeralContainerStatuses {
		if cs := &p.Status.EphemeralContainerStatuses[i]; cs.Name == ec {
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
				Message:   ec + ": allocating 2147483648 bytes (8 holders of at most 268435456 bytes each)\ntail: out of memory\n" + ec + ": released memory\n" + ec + ": " + said + "\n",
				StartedAt: cs.State.Running.StartedAt, FinishedAt: metav1.Now()}}
		}
	}
	if _, err := h.Kube.CoreV1().Pods(h.NS).UpdateStatus(h.Ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var res Result
	select {
	case res = <-done:
	case <-h.Ctx.Done():
		t.Fatal("--watch-eviction did not end")
	}
	lines := timelineLines(res.Stdout)
	want := fmt.Sprintf("the pressure did not run as asked: %s exited with code 1 (Error) and pod %s is still Running; it said: %s; its log: kubectl logs -n %s %s -c %s",
		ec, worker.Name, said, h.NS, worker.Name, ec)
	if res.Code != 1 || lines[len(lines)-1] != want {
		t.Errorf("want exit 1 and the verdict\n%s\ngot %s", want, res)
	}
}
