package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// TestRealNode runs on the sandbox's real node (a kubelet of sandbox.KubeVersion on containerd and
// runc): the evictions, OOM kills, crash loops, probes and graceful terminations here are the
// kubelet's own, and nothing is played but Ray itself (the stand-in image, docs/sandbox.md). One
// machine runs one real node, so the steps run in order: first on KubeRay v1.1.1, then on v1.6.0,
// each in a sandbox of its own.
func TestRealNode(t *testing.T) {
	t.Parallel()
	t.Run("kuberay-v111", func(t *testing.T) {
		sb := realNodeSandbox(t, sandbox.OperatorV111)
		t.Run("seed000", func(t *testing.T) { realSeed000V111(t, sb) })
		t.Run("evicted-succeeded", func(t *testing.T) { realEvictedSucceeded(t, sb) })
		t.Run("oom-crashloop", func(t *testing.T) { realOOMCrashLoop(t, sb) })
		t.Run("evidence-crashloop", func(t *testing.T) { realEvidenceOfACrashLoop(t, sb) })
		t.Run("bundle-ray-logs", func(t *testing.T) { realBundleRayLogs(t, sb) })
		t.Run("memory-pressure", func(t *testing.T) { realMemoryPressure(t, sb) })
		t.Run("memory-hold", func(t *testing.T) { realMemoryHold(t, sb) })
		t.Run("image-pull", func(t *testing.T) { realImagePull(t, sb) })
		t.Run("bystander", func(t *testing.T) { realBystander(t, sb) })
		t.Run("eviction-ranking", func(t *testing.T) { realEvictionRanking(t, sb, guardedFirst) })
		t.Run("eviction-ranking-swapped", func(t *testing.T) { realEvictionRanking(t, sb, unguardedFirst) })
		t.Run("head-kill", func(t *testing.T) { realHeadKill(t, sb) })
		t.Run("drain", func(t *testing.T) { realDrain(t, sb) })
	})
	t.Run("kuberay-v160", func(t *testing.T) {
		sb := realNodeSandbox(t, sandbox.OperatorV160)
		t.Run("seed000", func(t *testing.T) { realSeed000V160(t, sb) })
	})
}

// fillHead runs chaos disk-pressure on the head of cluster with the node's busybox: 800Mi of the
// node's 1 GiB filesystem, which leaves less than the kubelet's 300Mi threshold free.
func (h *H) fillHead(cluster string, timeout time.Duration) Result {
	h.T.Helper()
	h.realNodeCalm()
	return h.Run("chaos", "disk-pressure", cluster, "--size", "800Mi", "--duration", "60s", "--image", sandbox.BusyboxImage,
		"--watch-eviction", "--timeout", timeout.String(), "--yes")
}

// Seed 000 the whole way, nothing played: a full disk, the real kubelet evicts the head, KubeRay
// v1.1.1 leaves it, doctor says so in the kubelet's words, heal replaces it on the real node.
func realSeed000V111(t *testing.T, sb *sandbox.Sandbox) {
	h := newHOn(t, sb)
	h.CreateRayCluster("seed", onRealNode)
	head := h.WaitClusterRunning("seed", 2*time.Minute)
	if head.Spec.NodeName != sandbox.RealNodeName {
		t.Fatalf("head %s is on %s, want the real node", head.Name, head.Spec.NodeName)
	}
	free := realNodeFree(t, sb)

	r := h.fillHead("seed", 40*time.Second)
	if r.Code != 1 || !strings.Contains(r.Stdout, "pod "+head.Name+" evicted: The node was low on resource: ephemeral-storage") ||
		!strings.Contains(r.Stdout, "was not replaced") {
		t.Fatalf("disk-pressure: want exit 1, the kubelet's eviction and the head not replaced; got %s", r)
	}
	p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, head.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// What the kubelet wrote: the stand-in, like Ray, ignores SIGTERM as PID 1, so the pod ends
	// Failed/Evicted with a DisruptionTarget condition, as in seed 000.
	if p.Status.Phase != corev1.PodFailed || p.Status.Reason != "Evicted" {
		t.Fatalf("head %s is %s/%s, want Failed/Evicted", p.Name, p.Status.Phase, p.Status.Reason)
	}
	if c := condition(p, corev1.DisruptionTarget); c == nil || c.Reason != "TerminationByKubelet" {
		t.Errorf("no DisruptionTarget/TerminationByKubelet condition on %s: %+v", p.Name, p.Status.Conditions)
	}
	if evs := h.podEvents(p.Name, "Evicted"); len(evs) == 0 || !strings.HasPrefix(evs[0], "kubelet: The node was low on resource: ephemeral-storage") {
		t.Errorf("no Evicted Event from the kubelet: %q", evs)
	}
	// Cleanup on the node: the ephemeral container has ended and its fill went with it. The real
	// kubelet writes a running ephemeral container of an evicted pod as waiting ContainerCreating
	// with lastState ContainerStatusUnknown; one that ended first stays terminated.
	ecs := p.Status.EphemeralContainerStatuses
	if len(ecs) != 1 || ecs[0].State.Running != nil || (ecs[0].State.Terminated == nil && ecs[0].LastTerminationState.Terminated == nil) {
		t.Errorf("the ephemeral container has not ended: %+v", ecs)
	}
	h.WaitFor("the node's disk free again", time.Minute, func() (bool, error) {
		return realNodeFree(t, sb) > free-(64<<20), nil
	})
	time.Sleep(5 * time.Second) // KubeRay v1.1.1 reconciles the evicted head and leaves it
	if heads := h.Pods("seed", "head"); len(heads) != 1 || heads[0].Name != head.Name {
		t.Fatalf("want the evicted head %s alone, got %v", head.Name, podNames(heads))
	}
	if !strings.Contains(h.SB.LogTail("kuberay-operator", 400), "will not delete the Pod because its restartPolicy is set to 'Always'") {
		t.Errorf("operator log lacks seed 000's 'will not delete the Pod' line")
	}

	d, _ := h.doctorJSON("seed")
	f := d.finding(t, "seed", "head-evicted")
	if f.Severity != "error" || !strings.HasPrefix(f.Evidence["kubeletMessage"], "The node was low on resource: ephemeral-storage. Threshold quantity: 300Mi") ||
		!strings.Contains(f.Message, "will not replace it") {
		t.Errorf("head-evicted: %+v", f)
	}

	evidenceDir := t.TempDir()
	r = h.Run("heal", "seed", "--yes", "--timeout", "3m", "--evidence-dir", evidenceDir)
	if r.Code != 0 || !strings.Contains(r.Stdout, "deleted pod "+h.NS+"/"+head.Name) {
		t.Fatalf("heal: %s", r)
	}
	h.wantRealEvidence(filepath.Join(evidenceDir, h.NS, head.Name+"-"+string(head.UID)[:8]), r)
	newHead := h.WaitClusterRunning("seed", 2*time.Minute)
	if newHead.Name == head.Name || newHead.Spec.NodeName != sandbox.RealNodeName {
		t.Fatalf("new head %s on %s, want a new head on the real node", newHead.Name, newHead.Spec.NodeName)
	}
	h.realNodeCalm()
	h.removeFromRealNode("seed")
}

// wantRealEvidence: what heal kept of the head the real kubelet evicted, before deleting it. The
// pod's file and the real kubelet's Evicted Event are kept. Its log is not, and heal says why: a
// kubelet evicting for disk pressure reclaims the disk by removing the dead containers with their
// logs, and answers a log read with a line of its own ("unable to retrieve container logs for
// containerd://..."), which must not be kept as if it were the log.
func (h *H) wantRealEvidence(kept string, heal Result) {
	t := h.T
	t.Helper()
	if !strings.Contains(heal.Stdout, "  kept its evidence (YAML, Events, logs) in "+kept+"\n") {
		t.Errorf("heal does not say it kept the evidence in %s: %s", kept, heal)
	}
	matchLines(t, "heal stderr", heal.Stderr, `warning: evidence of pod `+regexp.QuoteMeta(h.NS)+`/\S+ kept without 1 read \(log of container ray-head: the kubelet no longer has this log .*\); healing anyway`)
	index, err := os.ReadFile(filepath.Join(kept, "index.md"))
	if err != nil || !strings.Contains(string(index), "- log of container ray-head: the kubelet no longer has this log") {
		t.Errorf("index.md (%v), want the head's log listed as not kept:\n%s", err, index)
	}
	if _, err := os.Stat(filepath.Join(kept, "logs", "ray-head.log")); err == nil {
		t.Errorf("the kubelet's no-log line was kept as the head's log")
	}
	if evs, err := os.ReadFile(filepath.Join(kept, "events.txt")); err != nil || !strings.Contains(string(evs), "Evicted") {
		t.Errorf("events.txt (%v) lacks the real kubelet's Evicted Event:\n%s", err, evs)
	}
	if pod, err := os.ReadFile(filepath.Join(kept, "pod.yaml")); err != nil || !strings.Contains(string(pod), "The node was low on resource: ephemeral-storage") {
		t.Errorf("pod.yaml (%v) lacks the kubelet's eviction message", err)
	}
}

// A Ray process that exits 0 on SIGTERM: the real kubelet can leave the evicted pod Succeeded with no
// Evicted reason. --watch-eviction, doctor and heal must still call it an eviction.
//
// The kubelet does not always leave it Succeeded: a CI run saw the same clean exit end
// Failed/Evicted (the outcome realSeed000V111 covers). So the eviction is tried up to three
// times, each on a new RayCluster, and the test fails only if no try ends Succeeded.
func realEvictedSucceeded(t *testing.T, sb *sandbox.Sandbox) {
	h := newHOn(t, sb)
	const tries = 3
	var cluster string
	for try := 1; ; try++ {
		cluster = fmt.Sprintf("clean-exit-%d", try)
		p := h.evictCleanExitHead(cluster)
		if p.Status.Phase == corev1.PodSucceeded && p.Status.Reason == "" {
			break
		}
		exit := "no exit code"
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Terminated != nil {
				exit = fmt.Sprintf("container %s exit code %d", cs.Name, cs.State.Terminated.ExitCode)
			}
		}
		if try == tries {
			t.Fatalf("head %s is %s/%q (%s), and so were the %d tries before: the kubelet no longer leaves a clean exit Succeeded; this test's premise is gone",
				p.Name, p.Status.Phase, p.Status.Reason, exit, tries-1)
		}
		t.Logf("try %d: the kubelet left head %s %s/%q (%s); trying again on a new RayCluster", try, p.Name, p.Status.Phase, p.Status.Reason, exit)
		h.removeFromRealNode(cluster)
	}
	d, _ := h.doctorJSON(cluster)
	f := d.finding(t, cluster, "head-evicted")
	if !strings.Contains(f.Message, "(phase Succeeded)") || !strings.HasPrefix(f.Evidence["kubeletMessage"], "The node was low on resource: ephemeral-storage") {
		t.Errorf("head-evicted: %+v", f)
	}
	hd, res := h.healJSON(cluster, "--dry-run")
	if res.Code != 0 || len(hd.Plan.Actions) != 1 || hd.Plan.Actions[0].Rule != "head-evicted" {
		t.Errorf("heal --dry-run: want one head-evicted delete; got %s", res)
	}
	h.removeFromRealNode(cluster)
}

// evictCleanExitHead creates RayCluster name with its head on the real node, its Ray process
// exiting 0 on SIGTERM, fills the node's disk until the kubelet evicts the head, and returns the
// evicted head as the API server holds it then.
func (h *H) evictCleanExitHead(name string) *corev1.Pod {
	h.T.Helper()
	h.CreateRayCluster(name, func(rc *rayv1.RayCluster) {
		onRealNode(rc)
		headEnv(rc, "RAY_STANDIN_SIGTERM", "exit")
	})
	head := h.WaitClusterRunning(name, 2*time.Minute)
	r := h.fillHead(name, 40*time.Second)
	if r.Code != 1 || !strings.Contains(r.Stdout, "pod "+head.Name+" evicted") {
		h.T.Fatalf("disk-pressure: want exit 1 and the eviction seen; got %s", r)
	}
	p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, head.Name, metav1.GetOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	return p
}

// Real OOM kills: a head and a worker whose Ray process outgrows its memory limit are killed by
// the kernel's cgroup OOM killer and restarted by the kubelet with its own back-off (10s, 20s, ...).
// A worker whose wait-gcs-ready init container outgrows the 256Mi KubeRay gives it (kuberay #2735)
// shows what this machine's cgroup v1 does: the OOM killer ends the `ray health-check` process,
// not the container (no group kill without cgroup v2's memory.oom.group), so the init container's
// shell loop runs on, never OOMKilled, and the worker waits in Init forever.
func realOOMCrashLoop(t *testing.T, sb *sandbox.Sandbox) {
	h := newHOn(t, sb)
	small := corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	}
	h.CreateRayCluster("oomhead", func(rc *rayv1.RayCluster) {
		onRealNode(rc)
		headEnv(rc, "RAY_STANDIN_EAT_MIB", "max")
		rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Resources = small
	})
	h.CreateRayCluster("oomworkers", func(rc *rayv1.RayCluster) {
		onRealNode(rc)
		w := rc.Spec.WorkerGroupSpecs[0]
		w.GroupName = "eats"
		one := int32(1)
		w.Replicas, w.MinReplicas = &one, &one
		w.Template.Spec.NodeSelector = nil
		sandbox.RealNodePlacement(&w.Template.Spec)
		w.Template.Spec.Containers[0].Env = append(w.Template.Spec.Containers[0].Env, corev1.EnvVar{Name: "RAY_STANDIN_EAT_MIB", Value: "max"})
		w.Template.Spec.Containers[0].Resources = small
		init := *w.DeepCopy()
		init.GroupName = "init-eats"
		init.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "RAY_STANDIN_HEALTHCHECK_EAT_MIB", Value: "max"}}
		rc.Spec.WorkerGroupSpecs = []rayv1.WorkerGroupSpec{w, init}
	})
	oomLooping := func(p corev1.Pod) bool {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.RestartCount >= 2 && cs.LastTerminationState.Terminated != nil && cs.LastTerminationState.Terminated.Reason == "OOMKilled" &&
				cs.LastTerminationState.Terminated.ExitCode == 137 {
				return true
			}
		}
		return false
	}
	group := func(cluster, g string) []corev1.Pod {
		var out []corev1.Pod
		for _, p := range h.Pods(cluster, "worker") {
			if p.Labels["ray.io/group"] == g {
				out = append(out, p)
			}
		}
		return out
	}
	h.WaitFor("the head of oomhead and the worker of group eats OOMKilled and restarted twice by the kubelet", 3*time.Minute, func() (bool, error) {
		heads, eats := h.Pods("oomhead", "head"), group("oomworkers", "eats")
		return len(heads) == 1 && oomLooping(heads[0]) && len(eats) == 1 && oomLooping(eats[0]), nil
	})
	h.WaitFor("the kernel to kill wait-gcs-ready's ray health-check", 2*time.Minute, func() (bool, error) {
		ws := group("oomworkers", "init-eats")
		if len(ws) != 1 {
			return false, nil
		}
		b, err := h.Kube.CoreV1().Pods(h.NS).GetLogs(ws[0].Name, &corev1.PodLogOptions{Container: "wait-gcs-ready"}).DoRaw(h.Ctx)
		return err == nil && strings.Contains(string(b), "Killed") && strings.Contains(string(b), "ray health-check"), nil
	})
	ws := group("oomworkers", "init-eats")
	if ics := ws[0].Status.InitContainerStatuses; len(ics) != 1 || ics[0].State.Running == nil || ics[0].RestartCount != 0 {
		t.Errorf("on cgroup v1 the init container runs on after its process's OOM kill; got %+v", ics)
	}

	d, r := h.doctorJSON("oomhead")
	if r.Code != 1 {
		t.Errorf("doctor oomhead: want exit 1; got %s", r)
	}
	f := d.finding(t, "oomhead", "head-crashloop")
	if !strings.Contains(f.Message+f.Evidence["lastState"]+f.Evidence["reason"], "OOMKilled") {
		t.Errorf("head-crashloop does not name the OOM kill: %+v", f)
	}
	d, _ = h.doctorJSON("oomworkers", "--workers-not-ready-window", "20s")
	eats := group("oomworkers", "eats")[0].Name
	w := d.finding(t, "oomworkers", "worker-crashloop")
	if w.Evidence["workers"] != eats || w.Evidence["group"] != "eats" || w.Evidence["lastState"] != "OOMKilled" {
		t.Errorf("worker-crashloop does not name the OOM-looping worker: %+v", w)
	}
	for _, f := range d.Findings {
		if f.Rule == "workers-not-ready" && strings.Contains(f.Evidence["workers"], eats) {
			t.Errorf("workers-not-ready names the crash-looping worker too: %+v", f)
		}
	}
	// The bundle keeps what maintainers ask for of both: the log of the instance the
	// kernel killed, read from the real kubelet, and the pod's last state. Which file holds it
	// depends on the state the bundle recorded, as the kubelet serves logs by it
	// (validateContainerLogStatus): while the container waits out its back-off or runs, the
	// killed instance is the previous one (NAME.previous.log); once it died again (state
	// terminated, OOMKilled), the current log is that instance's, and the one before it is
	// usually gone: the kubelet keeps one dead container per container (its container deletor
	// removes the older one as the newer dies), so "previous" names a container containerd no
	// longer has, and the bundle says so ("the kubelet no longer has this log").
	// The API's status lags the kubelet's: a container the API still shows running may have
	// died again, and its previous instance been removed, before the bundle asks for its log
	// (CI, 2026-12-07: three tries in a row). So each try starts in the back-off, with the
	// killed instance's log served to this test's own read, and a try whose log the kubelet
	// had dropped by the bundle's read is made again, at most 4 times.
	for cluster, pod := range map[string]string{"oomhead": h.Pods("oomhead", "head")[0].Name, "oomworkers": eats} {
		container := map[string]string{"oomhead": "ray-head", "oomworkers": "ray-worker"}[cluster]
		logs := cluster + "/logs/" + h.NS + "/" + pod + "/" + container
		var files map[string][]byte
		var order []string
		var missing string
		for try := 1; try <= 4; try++ {
			h.WaitFor(pod+"'s "+container+" in its crash-loop back-off, its killed instance's log served", 3*time.Minute, func() (bool, error) {
				p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, pod, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				for _, cs := range p.Status.ContainerStatuses {
					if cs.Name == container && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" {
						// A kubelet whose container is gone answers 200 with a line of its own.
						b, err := h.Kube.CoreV1().Pods(h.NS).GetLogs(pod, &corev1.PodLogOptions{Container: container, Previous: true}).DoRaw(h.Ctx)
						return err == nil && !strings.HasPrefix(string(b), "unable to retrieve container logs"), nil
					}
				}
				return false, nil
			})
			out := filepath.Join(t.TempDir(), cluster+".tar.gz")
			if r := h.Run("bundle", cluster, "-o", out); r.Code != 0 {
				t.Fatalf("bundle %s: %s", cluster, r)
			}
			files, order = untarBundle(t, out)
			var p corev1.Pod
			if err := yaml.Unmarshal(files[cluster+"/namespaces/"+h.NS+"/pods/"+pod+".json"], &p); err != nil {
				t.Fatalf("bundle %s: the pod's file: %v", cluster, err)
			}
			missing = "the container's status"
			state := ""
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Name != container {
					continue
				}
				state = fmt.Sprintf("%+v", cs.State)
				if cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.Reason != "OOMKilled" {
					t.Errorf("bundle %s: the pod's file lacks its OOMKilled last state: %+v", cluster, cs)
				}
				missing = ""
				killed := logs + ".previous.log"
				if cs.State.Terminated != nil && cs.State.Terminated.Reason == "OOMKilled" {
					killed = logs + ".log"
					if _, ok := files[logs+".previous.log"]; !ok && !strings.Contains(string(files[cluster+"/index.md"]), "the kubelet no longer has this log") {
						t.Errorf("bundle %s: no previous log, and the index does not say the kubelet removed it", cluster)
					}
				}
				if _, ok := files[killed]; !ok {
					missing = killed
				}
			}
			if missing == "" {
				break
			}
			if !strings.Contains(string(files[cluster+"/index.md"]), "the kubelet no longer has this log") {
				break // the kubelet did not drop it: the bundle lost it
			}
			t.Logf("bundle %s, try %d: the kubelet dropped the killed instance's log between the bundle's read of the pod (state %s) and of the log; again", cluster, try, state)
		}
		if missing != "" {
			t.Errorf("bundle %s: no log of the OOM-killed instance (%s): %v\n%s", cluster, missing, order, files[cluster+"/index.md"])
		}
	}
	h.removeFromRealNode("oomhead")
	h.removeFromRealNode("oomworkers")
}

// head-kill against real containers, through the real kubelet's port-forward, in every kill mode.
// The stand-in ignores SIGTERM as PID 1, as Ray does, so delete and evict wait out the real grace
// period before the kubelet kills it.
func realHeadKill(t *testing.T, sb *sandbox.Sandbox) {
	h := newHOn(t, sb)
	h.CreateRayCluster("hk", func(rc *rayv1.RayCluster) {
		onRealNode(rc)
		grace := int64(5)
		rc.Spec.HeadGroupSpec.Template.Spec.TerminationGracePeriodSeconds = &grace
	})
	for _, mode := range []string{"delete", "force", "evict"} {
		head := h.WaitClusterRunning("hk", 2*time.Minute)
		r := h.Run("chaos", "head-kill", "hk", "--service", "hk-head-svc", "--port", "8265", "--path", "/api/gcs_healthz",
			"--mode", mode, "--warmup", "2s", "--until-recovered", "--timeout", "2m", "--yes", "-o", "json")
		if r.Code != 0 {
			t.Fatalf("head-kill --mode %s: %s", mode, r)
		}
		for _, want := range []string{`"KillRequested"`, `"OldHeadGone"`, `"NewHeadReady"`, head.Name} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("head-kill --mode %s: the report lacks %s", mode, want)
			}
		}
		newHead := h.WaitClusterRunning("hk", 2*time.Minute)
		if newHead.Name == head.Name || newHead.Spec.NodeName != sandbox.RealNodeName {
			t.Fatalf("--mode %s: new head %s on %s", mode, newHead.Name, newHead.Spec.NodeName)
		}
	}
	h.removeFromRealNode("hk")
}

// Seed 000 on KubeRay v1.6.0: the operator replaces the evicted head itself (fixed since v1.2.0,
// PR #2217), on the real node once its pressure is gone, and heal deletes nothing.
func realSeed000V160(t *testing.T, sb *sandbox.Sandbox) {
	h := newHOn(t, sb)
	h.CreateRayCluster("seed", onRealNode)
	head := h.WaitClusterRunning("seed", 2*time.Minute)
	r := h.fillHead("seed", 150*time.Second)
	if r.Code != 0 || !strings.Contains(r.Stdout, "pod "+head.Name+" evicted: The node was low on resource: ephemeral-storage") {
		t.Fatalf("disk-pressure: want exit 0 (the operator replaced the head) after the kubelet's eviction; got %s", r)
	}
	h.waitOperatorEvent("seed", "DeletedHeadPod", head.Name)
	newHead := h.WaitClusterRunning("seed", 2*time.Minute)
	if newHead.Name == head.Name || newHead.Spec.NodeName != sandbox.RealNodeName {
		t.Fatalf("new head %s on %s, want a new head on the real node", newHead.Name, newHead.Spec.NodeName)
	}
	hd, res := h.healJSON("seed", "--yes")
	if res.Code != 0 || len(hd.Plan.Actions) != 0 {
		t.Errorf("heal: want nothing to do; got %s", res)
	}
	h.noHealDeletes()
	// Ray's own view of the new head (named, so asked without --ray), through the real kubelet's
	// port-forward into the real container: the stand-in image's dashboard answers the GCS health,
	// the version, no Serve apps and no jobs; it plays no node table, which doctor reports blind.
	d, res := h.doctorJSON("seed")
	if len(d.Clusters) != 1 || d.Clusters[0].Ray == nil || !d.Clusters[0].Ray.Read || !d.Clusters[0].Ray.GCSAlive || d.Clusters[0].Ray.RayVersion != "2.9.0" {
		t.Errorf("Ray's view through the real kubelet: %+v\n%s", d.Clusters, res)
	}
	for _, f := range d.Findings {
		if strings.HasPrefix(f.Rule, "ray-") || strings.HasPrefix(f.Rule, "serve-app-") {
			t.Errorf("finding on Ray's view of a healthy head: %s: %s", f.Rule, f.Message)
		}
	}
	if len(d.Blind) != 1 || !strings.Contains(d.Blind[0].Reason, "GET /api/v0/nodes?") || !strings.Contains(d.Blind[0].Reason, ": HTTP 404") {
		t.Errorf("blind %+v, want the node table the stand-in does not play", d.Blind)
	}
	h.removeFromRealNode("seed")
}

// memory-pressure on the real node. Node memory pressure itself is not made here: the kubelet's
// memory.available counts the whole machine (a Go build beside the tests moves it by gigabytes),
// so no threshold gives a deterministic eviction. What the real node does show: the allocation is
// really held in the pod's memory cgroup for the whole hold (busybox 1.35's tail once held 2 GiB
// for one sample and then nothing), it is freed at the end, and the container ends by itself.
// And an allocation past the pod's memory limit is OOM-killed by the kernel and reported as a
// failure, never as held.
func realMemoryPressure(t *testing.T, sb *sandbox.Sandbox) {
	h := newHOn(t, sb)
	h.CreateRayCluster("mem", onRealNode)
	head := h.WaitClusterRunning("mem", 2*time.Minute)
	base := podMemoryUsage(t, &head)

	r := h.Run("chaos", "memory-pressure", "mem", "--bytes", "1Gi", "--duration", "40s", "--image", sandbox.BusyboxImage, "--yes")
	if r.Code != 0 {
		t.Fatalf("memory-pressure: %s", r)
	}
	// Held: once allocated (about 8 s here), sampled through the hold, the pod's cgroup charges
	// at least the 1Gi asked.
	h.WaitFor("the pod's memory cgroup to charge the 1Gi", 30*time.Second, func() (bool, error) {
		return podMemoryUsage(t, &head) >= base+(1<<30), nil
	})
	for i := 0; i < 5; i++ {
		if got := podMemoryUsage(t, &head); got < base+(1<<30) {
			t.Fatalf("sample %d: the pod's memory cgroup charges %d MiB, want at least %d MiB + 1Gi", i, got>>20, base>>20)
		}
		time.Sleep(2 * time.Second)
	}
	ec, log := h.waitEphemeralEnded(head.Name)
	if ec.ExitCode != 0 || !strings.Contains(log, "held for 40s") {
		t.Errorf("the container ended %d: %q; want 0 and \"held for 40s\"", ec.ExitCode, log)
	}
	if got := podMemoryUsage(t, &head); got > base+(256<<20) {
		t.Errorf("after the run the pod's cgroup still charges %d MiB (before: %d MiB)", got>>20, base>>20)
	}

	// Past the pod's limit (the sample's head has 2G): the kernel kills a holder, and the script
	// says so and fails.
	r = h.Run("chaos", "memory-pressure", "mem", "--bytes", "3Gi", "--duration", "25s", "--image", sandbox.BusyboxImage, "--yes")
	if r.Code != 0 {
		t.Fatalf("memory-pressure 3Gi: %s", r)
	}
	ec, log = h.waitEphemeralEnded(head.Name)
	if ec.ExitCode == 0 || strings.Contains(log, "held for") {
		t.Errorf("an allocation past the pod's limit ended %d: %q; want a failure, never held", ec.ExitCode, log)
	}
	h.removeFromRealNode("mem")
}

// waitEphemeralEnded waits until the pod's newest ephemeral container has terminated and returns
// its termination and its log.
func (h *H) waitEphemeralEnded(pod string) (corev1.ContainerStateTerminated, string) {
	h.T.Helper()
	var out corev1.ContainerStateTerminated
	var name string
	h.WaitFor("the ephemeral container of "+pod+" to end", 2*time.Minute, func() (bool, error) {
		p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, pod, metav1.GetOptions{})
		if err != nil || len(p.Spec.EphemeralContainers) == 0 {
			return false, err
		}
		last := p.Spec.EphemeralContainers[len(p.Spec.EphemeralContainers)-1].Name
		for _, cs := range p.Status.EphemeralContainerStatuses {
			if cs.Name == last && cs.State.Terminated != nil {
				out, name = *cs.State.Terminated, last
				return true, nil
			}
		}
		return false, nil
	})
	b, err := h.Kube.CoreV1().Pods(h.NS).GetLogs(pod, &corev1.PodLogOptions{Container: name}).DoRaw(h.Ctx)
	if err != nil {
		h.T.Fatalf("the log of %s: %v", name, err)
	}
	return out, string(b)
}

// A head image that cannot be pulled: the real kubelet's pull fails on loopback (every registry
// points at a dead loopback address), and it backs off as it does in a cluster.
func realImagePull(t *testing.T, sb *sandbox.Sandbox) {
	h := newHOn(t, sb)
	const image = "localhost/kubectl-ray/ray:no-such-tag"
	h.CreateRayCluster("pull", func(rc *rayv1.RayCluster) {
		onRealNode(rc)
		rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Image = image
	})
	var waiting *corev1.ContainerStateWaiting
	h.WaitFor("the head waiting in ImagePullBackOff", 2*time.Minute, func() (bool, error) {
		heads := h.Pods("pull", "head")
		if len(heads) != 1 || len(heads[0].Status.ContainerStatuses) == 0 {
			return false, nil
		}
		waiting = heads[0].Status.ContainerStatuses[0].State.Waiting
		return waiting != nil && waiting.Reason == "ImagePullBackOff" && heads[0].Status.Phase == corev1.PodPending, nil
	})
	if !strings.HasPrefix(waiting.Message, "Back-off pulling image \""+image+"\": ErrImagePull: ") {
		t.Errorf("the kubelet's back-off message: %q", waiting.Message)
	}
	d, _ := h.doctorJSON("pull")
	f := d.finding(t, "pull", "image-pull-failed")
	if f.Evidence["image"] != image || f.Evidence["reason"] != "ImagePullBackOff" || f.Evidence["kubeletMessage"] != strings.TrimSpace(waiting.Message) {
		t.Errorf("image-pull-failed for the real kubelet's pull failure: %+v", f)
	}
	h.removeFromRealNode("pull")
}

// The kubelet, not the tool, picks whom to evict: with no requests and one priority it ranks pods by
// their disk usage, so a pod on the node that uses more disk than the target's fill goes first.
// chaos disk-pressure names it as a bystander, and its --dry-run names it beforehand.
//
// The sizes make the kubelet's choice certain. The bystander holds 500Mi and the fill writes
// 200Mi: the node's ~920Mi free drops to ~420Mi and then ~220Mi, under the 300Mi threshold, and
// the bystander is always the larger. An earlier version wrote 450Mi each, and a CI run saw the
// kubelet take the head first: with equal sizes, the pick depends on how far its stats lag.
func realBystander(t *testing.T, sb *sandbox.Sandbox) {
	h := newHOn(t, sb)
	h.CreateRayCluster("target", onRealNode)
	head := h.WaitClusterRunning("target", 2*time.Minute)
	by := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bystander", Namespace: h.NS},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: sandbox.BusyboxImage, ImagePullPolicy: corev1.PullNever,
			Command: []string{"sh", "-c", "dd if=/dev/zero of=/tmp/blob bs=1048576 count=500 && trap 'exit 0' TERM && sleep 3600 & wait"}}}},
	}
	sandbox.RealNodePlacement(&by.Spec)
	if _, err := h.Kube.CoreV1().Pods(h.NS).Create(h.Ctx, by, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the bystander Running", time.Minute, func() (bool, error) {
		p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, "bystander", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
	time.Sleep(25 * time.Second) // the kubelet's stats catch up with the bystander's 500Mi
	h.realNodeCalm()
	dry := h.Run("chaos", "disk-pressure", "target", "--size", "200Mi", "--image", sandbox.BusyboxImage, "--dry-run")
	if want := "shares node " + sandbox.RealNodeName + " with 1 other pod, which the kubelet may evict first, or as well: " + h.NS + "/bystander"; dry.Code != 0 || !strings.Contains(dry.Stderr, want) {
		t.Errorf("disk-pressure --dry-run does not name the pod that shares the real node; want %q in stderr:\n%s", want, dry)
	}
	r := h.Run("chaos", "disk-pressure", "target", "--size", "200Mi", "--duration", "30s", "--image", sandbox.BusyboxImage,
		"--watch-eviction", "--timeout", "50s", "--yes", "-o", "json")
	var rep struct {
		Eviction struct {
			Pods []struct {
				Pod       string `json:"pod"`
				Bystander bool   `json:"bystander"`
				Message   string `json:"message"`
			} `json:"pods"`
		} `json:"eviction"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("disk-pressure -o json: %v\n%s", err, r)
	}
	var named bool
	for _, p := range rep.Eviction.Pods {
		if p.Pod == "bystander" && p.Bystander && strings.HasPrefix(p.Message, "The node was low on resource: ephemeral-storage") {
			named = true
		}
	}
	if !named {
		t.Fatalf("the evicted bystander is not in eviction.pods: %s", r)
	}
	if !strings.Contains(r.Stderr, "bystander") {
		t.Errorf("the timeline on stderr does not call it a bystander:\n%s", r.Stderr)
	}
	p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, "bystander", metav1.GetOptions{})
	if err != nil || p.Status.Phase != corev1.PodFailed || p.Status.Reason != "Evicted" {
		t.Errorf("the bystander is not Failed/Evicted by the kubelet: %v %+v", err, p.Status)
	}
	// Whether the head goes too is the kubelet's call: once its stats see the fill, the node may still
	// be short and it evicts the head next (seen here: both went, and only the bystander in others).
	_ = head
	if err := h.Kube.CoreV1().Pods(h.NS).Delete(h.Ctx, "bystander", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.removeFromRealNode("target")
}
