package e2e

import (
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// waitWorker waits for a Running worker of cluster other than old, and returns it.
func (h *H) waitWorker(cluster, old string, timeout time.Duration) corev1.Pod {
	h.T.Helper()
	var w corev1.Pod
	h.WaitFor("a Running worker of "+cluster+" (not "+old+")", timeout, func() (bool, error) {
		for _, p := range h.Pods(cluster, "worker") {
			if p.Name != old && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				w = p
				return true, nil
			}
		}
		return false, nil
	})
	return w
}

// worker-evicted: the kubelet's node-pressure eviction of a worker is played (play.KubeletEvict).
// KubeRay v1.1.1 keeps the Failed worker and counts it, so no new worker comes: doctor reports
// worker-failed, heal deletes it, and the operator creates a new worker. v1.5.0 and v1.6.0
// delete it themselves (Event DeletedWorkerPod) and create a new one: doctor gives no heal
// advice and heal deletes nothing.
func matrixWorkerEvicted(t *testing.T, h *H, v kubeRayVersion) {
	h.CreateRayCluster("wk", nil)
	h.WaitClusterRunning("wk", 90*time.Second)
	w := h.waitWorker("wk", "", 60*time.Second)
	if _, err := play.KubeletEvict(h.Ctx, h.Kube, h.NS, w.Name, "memory"); err != nil {
		t.Fatal(err)
	}
	if !v.replacesEvicted {
		time.Sleep(5 * time.Second) // the operator's reconciles after the eviction: it keeps the pod
		if p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, w.Name, metav1.GetOptions{}); err != nil || p.Status.Phase != corev1.PodFailed {
			t.Fatalf("KubeRay v1.1.1 did something with the evicted worker: %v %+v", err, p.Status)
		}
		if others := h.Pods("wk", "worker"); len(others) != 1 {
			t.Fatalf("KubeRay v1.1.1 created a worker beside the evicted one: %d workers", len(others))
		}
		d, res := h.doctorJSON()
		f := d.finding(t, "wk", "worker-failed")
		wantContains(t, "message", f.Message, w.Name+" (Evicted: The node was low on resource: memory)",
			"the group runs 0 of 1 desired workers", "KubeRay v1.1.1 will not replace them", "kuberay #2125")
		wantContains(t, "remedy", f.Remedy, "kubectl ray heal wk -n "+h.NS)
		if res.Code != 0 || f.Severity != "warning" {
			t.Errorf("doctor exit %d, severity %s", res.Code, f.Severity)
		}
		hd, res := h.healJSON("--yes")
		if res.Code != 0 || len(hd.Plan.Actions) != 1 || hd.Plan.Actions[0].Pod.Name != w.Name || hd.Plan.Actions[0].Rule != "worker-failed" {
			t.Fatalf("heal: %s", res)
		}
		h.waitWorker("wk", w.Name, 60*time.Second)
		d, res = h.doctorJSON()
		if res.Code != 0 || len(d.rules("wk")) != 0 {
			t.Fatalf("after heal: %v\n%s", d.rules("wk"), res)
		}
		return
	}
	d, _ := h.doctorJSON()
	noHealAdvice(t, d)
	for _, f := range d.Findings {
		if f.Rule == "worker-failed" {
			t.Errorf("worker-failed within the grace of KubeRay %s: %s", v.version, f.Message)
		}
	}
	hd, res := h.healJSON("--yes")
	if res.Code != 0 || len(hd.Plan.Actions) != 0 {
		t.Fatalf("heal acted on a worker KubeRay %s replaces: %s", v.version, res)
	}
	h.waitOperatorEvent("wk", "DeletedWorkerPod", w.Name)
	h.waitWorker("wk", w.Name, 60*time.Second)
	h.noHealDeletes()
}

// heal --watch replaces a failed worker with no other command: the kubelet's eviction of the
// worker is played (play.KubeletEvict); KubeRay v1.1.1 keeps it, the watchdog deletes it (one
// JSON line naming the rule), and the operator creates a new worker.
func TestHealWatchReplacesFailedWorker(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("ww", nil)
	h.WaitClusterRunning("ww", 90*time.Second)
	w := h.waitWorker("ww", "", 60*time.Second)
	wd := h.startWatchdog("heal-workers", h.SB.Kubeconfig(), "heal", "--watch", "--yes", "--min-age", "0s", "-n", h.NS, "-o", "json")
	wd.WaitRecord("the watching line", 60*time.Second, "msg", "watching")
	if _, err := play.KubeletEvict(h.Ctx, h.Kube, h.NS, w.Name, "memory"); err != nil {
		t.Fatal(err)
	}
	rec := wd.WaitRecord("the delete of "+w.Name, 60*time.Second, "result", "deleted", "pod", w.Name)
	if rec["rule"] != "worker-failed" || rec["uid"] != string(w.UID) || rec["raycluster"] != h.NS+"/ww" {
		t.Errorf("watchdog line: %v", rec)
	}
	h.waitWorker("ww", w.Name, 60*time.Second)
	if code := wd.Stop(syscall.SIGTERM); code != 0 {
		t.Errorf("watchdog exit code on SIGTERM: %d; stderr: %s", code, wd.Stderr())
	}
}
