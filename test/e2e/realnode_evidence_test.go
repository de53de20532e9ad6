package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// heal keeps a crash-looping head's previous log, from the real kubelet, before it deletes the
// head. The head's Ray process exits 1 at each start (the stand-in's RAY_STANDIN_EXIT_CODE), so
// the kubelet restarts it in a loop; heal does not delete a crash-looping head (a new one would
// loop the same way), so the head is given an activeDeadlineSeconds: when it passes, the real
// kubelet fails the pod (DeadlineExceeded), restartPolicy stays Always, and KubeRay v1.1.1 leaves
// the Failed head (kuberay #2125): head-terminated, which heal deletes. The dead container of the
// last crash is still on the node (the kubelet keeps one dead container per container), so its
// log is in the evidence: `kubectl logs --previous` while the next instance ran, or the current
// log when the pod failed with that crash as its last state.
func realEvidenceOfACrashLoop(t *testing.T, sb *sandbox.Sandbox) {
	h := newHOn(t, sb)
	deadline := int64(45)
	h.CreateRayCluster("loop", func(rc *rayv1.RayCluster) {
		onRealNode(rc)
		headEnv(rc, "RAY_STANDIN_EXIT_CODE", "1")
		rc.Spec.HeadGroupSpec.Template.Spec.ActiveDeadlineSeconds = &deadline
		rc.Spec.WorkerGroupSpecs = nil
	})
	var head corev1.Pod
	h.WaitFor("the head to crash, restart, and fail at its deadline", 3*time.Minute, func() (bool, error) {
		heads := h.Pods("loop", "head")
		if len(heads) != 1 {
			return false, nil
		}
		head = heads[0]
		return head.Status.Phase == corev1.PodFailed && head.Status.Reason == "DeadlineExceeded", nil
	})
	restarts := int32(0)
	for _, cs := range head.Status.ContainerStatuses {
		restarts = max(restarts, cs.RestartCount)
	}
	if restarts == 0 {
		t.Fatalf("the head failed at its deadline without restarting: %+v", head.Status.ContainerStatuses)
	}

	evidenceDir := t.TempDir()
	r := h.Run("heal", "loop", "--yes", "--wait=false", "--evidence-dir", evidenceDir)
	kept := filepath.Join(evidenceDir, h.NS, head.Name+"-"+string(head.UID)[:8])
	if r.Code != 0 || !strings.Contains(r.Stdout, "deleted pod "+h.NS+"/"+head.Name+" (rule head-terminated)") ||
		!strings.Contains(r.Stdout, "  kept its evidence (YAML, Events, logs) in "+kept+"\n") {
		t.Fatalf("heal: %s", r)
	}
	t.Logf("heal (the head restarted %d times):\n%s", restarts, r)
	// A crash's log is kept where the kubelet serves it: as the previous log while the container
	// restarted runs, or as the current one once it crashed again, the pod failing before the
	// next restart (its state terminated, exit code 1). The kubelet keeps one dead container per
	// container, so in that case the crash before it is gone (seen in CI, 2026-12-04), and the
	// index must say that the previous log was not kept.
	const crash = "exiting with code 1 as RAY_STANDIN_EXIT_CODE asks"
	previous, perr := os.ReadFile(filepath.Join(kept, "logs", "ray-head.previous.log"))
	current, _ := os.ReadFile(filepath.Join(kept, "logs", "ray-head.log"))
	index, _ := os.ReadFile(filepath.Join(kept, "index.md"))
	switch {
	case perr == nil && strings.Contains(string(previous), crash):
	case perr != nil && strings.Contains(string(current), crash) && strings.Contains(string(index), "ray-head (previous)"):
		t.Logf("the last crash's log is the current one; the kubelet had removed the one before")
	default:
		t.Errorf("no crash's log kept (previous: %v):\n%s\ncurrent:\n%s\nindex.md:\n%s", perr, previous, current, index)
	}
	if pod, err := os.ReadFile(filepath.Join(kept, "pod.yaml")); err != nil || !strings.Contains(string(pod), "DeadlineExceeded") ||
		!strings.Contains(string(pod), "exitCode: 1") {
		t.Errorf("pod.yaml (%v) lacks the deadline and the crash's exit code:\n%s", err, pod)
	}
	if evs, err := os.ReadFile(filepath.Join(kept, "events.txt")); err != nil || !strings.Contains(string(evs), "BackOff") {
		t.Errorf("events.txt (%v) lacks the kubelet's BackOff Events:\n%s", err, evs)
	}
	h.removeFromRealNode("loop")
}
