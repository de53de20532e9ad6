package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// head-recreate-loop and heal's back-off (kuberay #4272), on KubeRay v1.1.1. The head dies soon
// after each start: the kubelet's part (a node-pressure eviction) is played by play.KubeletEvict.
// heal replaces it three times, each time recording RayHeadHealed on the RayCluster, and the real
// operator creates each new head. The fourth time doctor reports the loop and heal, one-shot and
// --watch, backs off instead of joining it; the watchdog records the back-off as an Event.
func TestHealBacksOffHeadRecreateLoop(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("rl", nil)
	head := h.WaitClusterRunning("rl", 90*time.Second)
	for i := 0; i < 3; i++ {
		old := h.healEvict("rl")
		if res := h.Run("heal", "rl", "--yes", "--timeout", "90s"); res.Code != 0 {
			t.Fatalf("heal turn %d: %s", i+1, res)
		}
		head = h.waitNewHead("rl", old.Name, 90*time.Second)
	}
	h.WaitStateReady("rl", 60*time.Second) // status-stale needs the state v1.1.1 writes
	evicted := h.healEvict("rl")
	if evicted.Name != head.Name {
		t.Fatalf("evicted %s, want the current head %s", evicted.Name, head.Name)
	}

	d, res := h.doctorJSON("rl", "--ray=false")
	if res.Code == 0 {
		t.Fatalf("doctor on a looping cluster exited 0: %s", res)
	}
	// v1.1.1 keeps .status.state ready for a cluster whose head was evicted (kuberay #2188).
	wantRules(t, d, "rl", rule("head-recreate-loop", "pod", evicted.Name), rule("head-evicted", "pod", evicted.Name), "status-stale raycluster/rl")
	f := d.finding(t, "rl", "head-recreate-loop")
	wantContains(t, "message", f.Message, "the head of RayCluster "+h.NS+"/rl was deleted and recreated 3 times in the last ",
		"(0 by the operator, 3 by heal)", "last exit 137 (ContainerStatusUnknown)", "current head "+evicted.Name+" is ", "Failed (Evicted)")
	for k, v := range map[string]string{"deletions": "3", "byHeal": "3", "byOperator": "0", "lastExitCode": "137", "head": evicted.Name} {
		if f.Evidence[k] != v {
			t.Errorf("evidence %s = %q, want %q", k, f.Evidence[k], v)
		}
	}

	// heal once: the evicted head would be deleted on any other cluster; here heal backs off.
	doc, once := h.healPlanJSON("rl")
	if once.Code != 0 || len(doc.Plan.Actions) != 0 {
		t.Fatalf("heal planned deletes on a looping cluster: %s", once)
	}
	backedOff := map[string]bool{}
	for _, sk := range doc.Plan.NotHealable {
		if strings.Contains(sk.Why, "heal backs off: the head was deleted and recreated 3 times") && strings.Contains(sk.Why, "kuberay #4272") {
			backedOff[sk.Rule] = true
		}
	}
	if !backedOff["head-evicted"] || !backedOff["head-recreate-loop"] {
		t.Fatalf("heal does not say why it backs off: %s", once.Stdout)
	}
	text := h.Run("heal", "rl", "--yes")
	wantContains(t, "heal text", text.Stdout, "heal backs off")

	// heal --watch: never deletes the evicted head, logs why and records it as an Event.
	wd := h.startWatchdog("heal", h.SB.Kubeconfig(), "heal", "--watch", "--yes", "--min-age", "0s", "-n", h.NS, "-o", "json")
	wd.WaitRecord("the back-off line", 60*time.Second, "msg", "not healable", "rule", "head-recreate-loop")
	var ev corev1.Event
	h.WaitFor("a RayHealBackedOff Event on RayCluster rl", 60*time.Second, func() (bool, error) {
		l, err := h.Kube.CoreV1().Events(h.NS).List(h.Ctx, metav1.ListOptions{FieldSelector: "reason=RayHealBackedOff"})
		if err != nil || len(l.Items) == 0 {
			return false, err
		}
		ev = l.Items[0]
		return true, nil
	})
	if ev.InvolvedObject.Kind != "RayCluster" || ev.InvolvedObject.Name != "rl" || !strings.Contains(ev.Message, "heal backs off") {
		t.Errorf("back-off Event: %+v", ev)
	}
	time.Sleep(5 * time.Second) // room for a wrong delete to show
	if n := len(wd.Matching("result", "deleted")); n != 0 {
		t.Fatalf("the watchdog deleted %d pods of a looping cluster:\n%s", n, strings.Join(wd.Lines(), "\n"))
	}
	if h.podGone(evicted.Name, string(evicted.UID)) {
		t.Fatalf("the evicted head %s is gone", evicted.Name)
	}
}

// worker-init-failing (kuberay #2735): a worker's wait-gcs-ready init container is OOMKilled at its
// limit and crash-loops. The kubelet's part (the init container statuses, the pod back in Pending)
// is played through the API; the real KubeRay v1.1.1 injected the init container.
func TestDoctorWorkerInitFailing(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("wi", nil)
	h.WaitClusterRunning("wi", 90*time.Second)
	workers := h.Pods("wi", "worker")
	if len(workers) == 0 {
		t.Fatal("no worker")
	}
	w := workers[0]
	if len(w.Spec.InitContainers) == 0 || w.Spec.InitContainers[0].Name != "wait-gcs-ready" {
		t.Fatalf("worker %s has no wait-gcs-ready init container: %+v", w.Name, w.Spec.InitContainers)
	}
	kubeletInitOOMLoop(t, h, w.Name, 5)

	d, _ := h.doctorJSON("wi", "--ray=false")
	wantRules(t, d, "wi", rule("worker-init-failing", "pod", w.Name))
	f := d.finding(t, "wi", "worker-init-failing")
	wantContains(t, "message", f.Message, "init container wait-gcs-ready of worker "+w.Name+" is CrashLoopBackOff (5 restarts), last exit 137 (OOMKilled)")
	wantContains(t, "remedy", f.Remedy, "ENABLE_INIT_CONTAINER_INJECTION=false")
	if f.Evidence["restarts"] != "5" || f.Evidence["lastState"] != "OOMKilled" {
		t.Errorf("evidence %v", f.Evidence)
	}
}

// kubeletInitOOMLoop writes what the kubelet shows for a pod whose first init container is
// OOMKilled at each try: pod Pending, Initialized=False, the init container waiting in
// CrashLoopBackOff with its last state OOMKilled (exit 137), the app containers PodInitializing.
func kubeletInitOOMLoop(t *testing.T, h *H, name string, restarts int32) {
	t.Helper()
	p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	ic := p.Spec.InitContainers[0]
	p.Status.Phase = corev1.PodPending
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{{
		Name: ic.Name, Image: ic.Image, ImageID: ic.Image, RestartCount: restarts,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: "back-off 2m40s restarting failed container=" + ic.Name + " pod=" + name}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "OOMKilled", StartedAt: metav1.NewTime(now.Add(-20 * time.Second)), FinishedAt: now}},
	}}
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		cs.Ready, cs.Started = false, nil
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
	}
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		if c.Type == corev1.PodInitialized || c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			c.Status, c.Reason, c.LastTransitionTime = corev1.ConditionFalse, "ContainersNotInitialized", now
		}
	}
	if _, err := h.Kube.CoreV1().Pods(h.NS).UpdateStatus(h.Ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// head-starved-by-workers (kuberay #3592): the head asks for more CPU than any node has left, the
// real scheduler marks it Unschedulable (Insufficient cpu) and places the workers. doctor gives
// the one refined finding, not head-pending beside it, and heal does not touch it.
func TestDoctorHeadStarvedByWorkers(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("starved", func(rc *rayv1.RayCluster) {
		c := &rc.Spec.HeadGroupSpec.Template.Spec.Containers[0]
		big := resource.MustParse("1000")
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: big}
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: big}
	})
	var head corev1.Pod
	h.WaitFor("an Unschedulable head and a scheduled worker", 90*time.Second, func() (bool, error) {
		heads, workers := h.Pods("starved", "head"), h.Pods("starved", "worker")
		if len(heads) != 1 || len(workers) == 0 || workers[0].Spec.NodeName == "" {
			return false, nil
		}
		for _, c := range heads[0].Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
				head = heads[0]
				return true, nil
			}
		}
		return false, nil
	})
	d, _ := h.doctorJSON("starved", "--ray=false")
	wantRules(t, d, "starved", rule("head-starved-by-workers", "pod", head.Name))
	f := d.finding(t, "starved", "head-starved-by-workers")
	wantContains(t, "message", f.Message, "head pod "+head.Name+" is Pending for ", "Insufficient cpu", "worker(s) of this cluster are scheduled", "kuberay #3592")
	wantContains(t, "remedy", f.Remedy, "priorityClassName", "gang scheduling")

	doc, res := h.healPlanJSON("starved")
	if res.Code != 0 || len(doc.Plan.Actions) != 0 || len(doc.Plan.NotHealable) != 1 || doc.Plan.NotHealable[0].Rule != "head-starved-by-workers" {
		t.Fatalf("heal on a starved head: %s", res)
	}
}

// healPlan is the part of heal's -o json these tests read.
type healPlan struct {
	Plan struct {
		Actions     []json.RawMessage `json:"actions"`
		NotHealable []struct {
			Rule string `json:"rule"`
			Why  string `json:"why"`
		} `json:"notHealable"`
	} `json:"plan"`
}

// healPlanJSON runs `heal CLUSTER --yes -o json` and parses its document.
func (h *H) healPlanJSON(cluster string, extra ...string) (healPlan, Result) {
	h.T.Helper()
	res := h.Run(append([]string{"heal", cluster, "--yes", "-o", "json"}, extra...)...)
	var doc healPlan
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
		h.T.Fatalf("heal -o json: %v\n%s", err, res)
	}
	return doc, res
}

// workers-stale and heal --stale-workers (kuberay #1141), on KubeRay v1.1.1 without GCS fault
// tolerance. The head is evicted (the kubelet's part, play.KubeletEvict) and heal replaces it; the
// real operator creates the new head and, like every KubeRay version, leaves the workers alone.
// Ray's part, a raylet that never gives up on the lost GCS, is played by doing nothing: no
// worker container restarts. Once the new head has been Ready for StaleWorkersGrace (3m) doctor
// reports the workers; heal deletes them only with --stale-workers.
func TestHealStaleWorkers(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("sw", nil)
	h.WaitClusterRunning("sw", 90*time.Second)
	workers := h.Pods("sw", "worker")
	if len(workers) == 0 {
		t.Fatal("no worker")
	}
	// Container start times have one-second resolution, and under kwok the whole evict-and-heal
	// takes about a second: a head started in the worker's own second cannot be ordered after it,
	// and the rule rightly stays silent. Wait for the next second to be safely past.
	for _, w := range workers {
		if cs := w.Status.ContainerStatuses; len(cs) > 0 && cs[0].State.Running != nil {
			time.Sleep(time.Until(cs[0].State.Running.StartedAt.Add(2 * time.Second)))
		}
	}
	old := h.healEvict("sw")
	if res := h.Run("heal", "sw", "--yes", "--timeout", "90s"); res.Code != 0 {
		t.Fatalf("heal: %s", res)
	}
	h.waitNewHead("sw", old.Name, 90*time.Second)

	// StaleWorkersGrace (3m by default) is set to 10s with its flag, so the test does not wait 3m.
	grace := []string{"--stale-workers-grace", "10s"}
	var d drDoc
	h.WaitFor("doctor to report workers-stale (10s after the new head is Ready)", 90*time.Second, func() (bool, error) {
		d, _ = h.doctorJSON(append([]string{"sw"}, grace...)...)
		for _, r := range d.rules("sw") {
			if strings.HasPrefix(r, "workers-stale ") {
				return true, nil
			}
		}
		time.Sleep(2 * time.Second)
		return false, nil
	})
	f := d.finding(t, "sw", "workers-stale")
	wantContains(t, "message", f.Message, "worker(s) started before head", "kuberay #1141")
	for _, w := range workers {
		wantContains(t, "workers", f.Evidence["workers"], w.Name)
	}
	// A stale worker whose readiness fails too (the kubelet's part played) is still one finding:
	// workers-not-ready, its window set to 1s, leaves it to workers-stale.
	if _, err := play.KubeletPodNotReady(h.Ctx, h.Kube, h.NS, workers[0].Name); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	d, _ = h.doctorJSON(append([]string{"sw", "--workers-not-ready-window", "1s"}, grace...)...)
	if got := d.rules("sw"); !slices.Contains(got, "workers-stale raycluster/sw") || slices.ContainsFunc(got, func(r string) bool { return strings.HasPrefix(r, "workers-not-ready ") }) {
		t.Errorf("a stale worker not Ready: rules %v, want workers-stale alone", got)
	}

	doc, res := h.healPlanJSON("sw", grace...)
	if res.Code != 0 || len(doc.Plan.Actions) != 0 || len(doc.Plan.NotHealable) != 1 || !strings.Contains(doc.Plan.NotHealable[0].Why, "pass --stale-workers") {
		t.Fatalf("heal without --stale-workers: %s", res)
	}
	if res := h.Run(append([]string{"heal", "sw", "--yes", "--stale-workers", "--timeout", "90s"}, grace...)...); res.Code != 0 {
		t.Fatalf("heal --stale-workers: %s", res)
	}
	// heal returns once the deletes are accepted; kwok removes the pods a moment later.
	h.WaitFor("the stale workers deleted", 30*time.Second, func() (bool, error) {
		for _, w := range workers {
			if !h.podGone(w.Name, string(w.UID)) {
				return false, nil
			}
		}
		return true, nil
	})
	evs := healEventsAbout(h.healEvents(), "Pod", workers[0].Name)
	if len(evs) != 1 || !strings.Contains(evs[0].Message, "deleted worker pod "+workers[0].Name) {
		t.Errorf("RayHeadHealed Events about %s: %+v", workers[0].Name, evs)
	}
	h.WaitFor("new workers Running", 90*time.Second, func() (bool, error) {
		ws := h.Pods("sw", "worker")
		return len(ws) == len(workers) && ws[0].Status.Phase == corev1.PodRunning && ws[0].Name != workers[0].Name, nil
	})
	d, _ = h.doctorJSON(append([]string{"sw"}, grace...)...)
	for _, r := range d.rules("sw") {
		if strings.HasPrefix(r, "workers-stale ") {
			t.Errorf("workers-stale after heal --stale-workers: %v", d.rules("sw"))
		}
	}
}
