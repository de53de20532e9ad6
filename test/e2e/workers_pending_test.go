package e2e

import (
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// worker-pending: a worker group asks for more CPU than any node has. Nothing is played: the
// sandbox's real kube-scheduler refuses the worker in its own words, and doctor quotes them once
// the worker has waited past --pending-too-long (set to 1s here, so the test does not wait 5m).
// heal lists it as not healable.
func TestDoctorWorkerPending(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("big", func(rc *rayv1.RayCluster) {
		c := &rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0]
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")}
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")}
	})
	var worker corev1.Pod
	h.WaitFor("the head Running and the scheduler's Unschedulable verdict on the worker", 90*time.Second, func() (bool, error) {
		if heads := h.Pods("big", "head"); len(heads) != 1 || heads[0].Status.Phase != corev1.PodRunning {
			return false, nil
		}
		for _, p := range h.Pods("big", "worker") {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
					worker = p
					return true, nil
				}
			}
		}
		return false, nil
	})
	time.Sleep(1100 * time.Millisecond)
	d, res := h.doctorJSON("big", "--pending-too-long", "1s", "--ray=false")
	f := d.finding(t, "big", "worker-pending")
	wantContains(t, "message", f.Message, "1 worker pod(s) of group small-group are Pending", "Unschedulable: 0/", "Insufficient cpu",
		"the group runs 0 of 1 desired workers")
	if res.Code != 0 || f.Severity != "warning" || f.Evidence["workers"] != worker.Name {
		t.Errorf("doctor exit %d, severity %s, evidence %v", res.Code, f.Severity, f.Evidence)
	}
	if d, _ := h.doctorJSON("big", "--ray=false"); len(d.rules("big")) != 0 {
		t.Errorf("within the default 5m: %v", d.rules("big"))
	}
	hd, res := h.healJSON("big", "--dry-run", "--pending-too-long", "1s")
	if res.Code != 0 || len(hd.Plan.Actions) != 0 || len(hd.Plan.NotHealable) != 1 || hd.Plan.NotHealable[0].Rule != "worker-pending" {
		t.Fatalf("heal: %s", res)
	}
	wantContains(t, "heal's why", hd.Plan.NotHealable[0].Why, "a new pod would wait the same way")
}
