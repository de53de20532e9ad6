package e2e

import (
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// head-terminating-stuck: the head is bound to a node nothing runs (play.NodeLost: no kubelet,
// Ready Unknown) and deleted. With no kubelet to confirm the kill, the pod stays Terminating; the
// test uses no finalizer. Doctor is silent within the grace period plus its 1m margin, then
// reports the pod and says its node is unreachable.
func TestDoctorHeadTerminatingStuck(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	head := h.headStuckTerminating("stuck")
	lost := head.Spec.NodeName
	deleted := time.Now()
	d, _ := h.doctorJSON()
	for _, f := range d.Findings {
		if f.Rule == "head-terminating-stuck" {
			t.Fatalf("reported stuck %s after deletion, within the margin: %s", time.Since(deleted), f.Message)
		}
	}
	var f drFinding
	h.WaitFor("doctor to report head-terminating-stuck", 150*time.Second, func() (bool, error) {
		time.Sleep(2 * time.Second) // WaitFor polls every 200ms; a doctor run each time is needless load
		d, _ = h.doctorJSON()
		for _, x := range d.Findings {
			if x.Rule == "head-terminating-stuck" {
				f = x
				return true, nil
			}
		}
		return false, nil
	})
	// deletionTimestamp is now+1s truncated to the second, so it may read up to 1s early.
	if waited := time.Since(deleted); waited < 60*time.Second {
		t.Errorf("reported after %s, before grace (1s) + margin (1m)", waited)
	}
	// Still there: nothing confirmed the kill.
	if p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, head.Name, metav1.GetOptions{}); err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("head %s: %v", head.Name, err)
	}
	if f.Object.Name != head.Name || f.Evidence["nodeState"] != "unreachable" {
		t.Fatalf("finding %+v", f)
	}
	wantContains(t, "message", f.Message, "head pod "+head.Name+" has been terminating ", " past its grace period; its node "+lost+" is unreachable")
	wantContains(t, "remedy", f.Remedy, "kubectl ray heal stuck -n "+h.NS+" --force", "--grace-period=0 --force")
	// The lost node carries the Ray pod, so node-pressure says it is unreachable too.
	wantRules(t, d, "stuck", rule("head-terminating-stuck", "pod", head.Name), rule("node-pressure", "node", lost))
}

// node-pressure on the test's own node (sandbox.FakeNode): both Ray pods pinned there, then the
// kubelet's DiskPressure condition and taint played through the API.
func TestDoctorNodePressure(t *testing.T) {
	t.Parallel() // it changes only its own node
	h := NewH(t)
	node := h.ownNode("pressure-" + h.NS)
	h.CreateRayCluster("pressed", func(rc *rayv1.RayCluster) {
		pinCluster(rc, node)
	})
	head := h.WaitClusterRunning("pressed", 90*time.Second)
	worker := h.Pods("pressed", "worker")[0]
	if d, res := h.doctorJSON(); res.Code != 0 || len(d.rules("pressed")) != 0 {
		t.Fatalf("before pressure: %v %s", d.rules("pressed"), res)
	}
	if err := play.KubeletNodePressure(h.Ctx, h.Kube, node, play.DiskPressure); err != nil {
		t.Fatal(err)
	}
	d, res := h.doctorJSON()
	if res.Code != 0 {
		t.Fatalf("a warning must not fail --fail-on error: %s", res)
	}
	wantRules(t, d, "pressed", rule("node-pressure", "node", node))
	f := d.finding(t, "pressed", "node-pressure")
	wantContains(t, "message", f.Message, "node "+node+" running 2 Ray pods is DiskPressure: ", head.Name, worker.Name)
	if f.Evidence["conditions"] != "DiskPressure" {
		t.Errorf("evidence %v", f.Evidence)
	}
	if r := h.Run("doctor", "--fail-on", "warning"); r.Code != 1 {
		t.Errorf("--fail-on warning: %s", r)
	}
}

// workers-not-ready: the worker never became Ready again (its readiness probe failing, the
// kubelet's part played) while the head is Ready. The rule waits 5 minutes of NotReady, so this
// test does too: silent before, reported after. The head did not restart, and doctor must not
// say it did.
func TestDoctorWorkersNotReady(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("lonely", nil)
	head := h.WaitClusterRunning("lonely", 90*time.Second)
	worker := h.Pods("lonely", "worker")[0]
	if _, err := play.KubeletPodNotReady(h.Ctx, h.Kube, h.NS, worker.Name); err != nil {
		t.Fatal(err)
	}
	// On a loaded machine kwok's heartbeats can lag, the node lifecycle controller then marks every
	// pod NotReady, and kwok never marks them Ready again; a real kubelet would. For the five
	// minutes this test waits, play that kubelet for the head: it reports Ready again.
	go func() {
		for h.Ctx.Err() == nil {
			time.Sleep(2 * time.Second)
			p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, head.Name, metav1.GetOptions{})
			if err != nil || PodRunningReady(p) {
				continue
			}
			for i := range p.Status.Conditions {
				if c := &p.Status.Conditions[i]; c.Type == corev1.PodReady {
					c.Status, c.Reason, c.Message = corev1.ConditionTrue, "", ""
				}
			}
			_, _ = h.Kube.CoreV1().Pods(h.NS).UpdateStatus(h.Ctx, p, metav1.UpdateOptions{})
		}
	}()
	d, _ := h.doctorJSON()
	wantRules(t, d, "lonely") // within the 5m window: a worker rejoining is normal
	h.WaitFor("doctor to report workers-not-ready", 7*time.Minute, func() (bool, error) {
		time.Sleep(5 * time.Second) // WaitFor polls every 200ms; a doctor run each time is needless load
		d, _ = h.doctorJSON()
		return len(d.rules("lonely")) > 0, nil
	})
	wantRules(t, d, "lonely", "workers-not-ready raycluster/lonely")
	f := d.finding(t, "lonely", "workers-not-ready")
	wantContains(t, "message", f.Message, "1 of 1 workers not Ready for up to 5m", "while head "+head.Name+" is Ready",
		"GCS fault tolerance is off, so workers do not survive a head restart")
	if strings.Contains(f.Message, "head restarted") {
		t.Errorf("the head never restarted: %s", f.Message)
	}
	if f.Evidence["workers"] != worker.Name || f.Evidence["gcsFaultTolerance"] != "off" {
		t.Errorf("evidence %v", f.Evidence)
	}
}

// On KubeRay v1.5.0 the operator replaces an evicted head itself (fixed since v1.2.0): doctor
// never claims KubeRay will not replace it, reports no outdated operator, and is silent once the
// new head runs. The eviction is the kubelet's part, played.
func TestDoctorHeadEvictedKubeRayV150(t *testing.T) {
	t.Parallel()
	h := newHOn(t, sandboxV150(t))
	h.CreateRayCluster("fixed", nil)
	head := h.WaitClusterRunning("fixed", 90*time.Second)
	if _, err := play.KubeletEvict(h.Ctx, h.Kube, h.NS, head.Name, "memory"); err != nil {
		t.Fatal(err)
	}
	d, res := h.doctorJSON()
	if strings.Contains(res.Stdout, "will not replace") || strings.Contains(res.Stdout, "may not replace") {
		t.Fatalf("doctor on v1.5.0 says the head will not be replaced: %s", res)
	}
	wantRules(t, d, "")
	if len(d.Operators) != 1 || d.Operators[0].Version != "v1.5.0" {
		t.Fatalf("operators %+v", d.Operators)
	}
	// The operator races doctor: either the evicted head is still there, and doctor says the
	// operator should replace it, or it is already gone.
	for _, f := range d.Findings {
		if f.Rule == "head-evicted" {
			t.Logf("doctor saw the evicted head before KubeRay v1.5.0 replaced it")
			wantContains(t, "message", f.Message, "KubeRay v1.5.0 should replace it within 2m")
		}
	}
	newHead := h.WaitClusterRunning("fixed", 60*time.Second)
	if newHead.Name == head.Name {
		t.Fatalf("head %s was not replaced", head.Name)
	}
	d, res = h.doctorJSON()
	if res.Code != 0 || len(d.Findings) != 0 || d.health("fixed") != "healthy" {
		t.Fatalf("after the replacement: %v %s", d.rules("fixed"), res)
	}
}
