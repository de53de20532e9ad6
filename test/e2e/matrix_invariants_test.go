package e2e

import (
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// group-removed: a worker group is removed from a running RayCluster's spec. The real operator of
// each version sees the new spec (observedGeneration) and leaves the group's pod running, since it
// reconciles only the groups the spec names; doctor, silent while spec and pods agreed, reports
// workers-outside-spec naming the group and the spec's groups; heal leaves it alone. About 15 s.
func matrixGroupRemoved(t *testing.T, h *H, v kubeRayVersion) {
	h.CreateRayCluster("gr", func(rc *rayv1.RayCluster) {
		extra := *rc.Spec.WorkerGroupSpecs[0].DeepCopy()
		extra.GroupName, extra.Replicas, extra.MinReplicas = "extra", ptr.To[int32](1), ptr.To[int32](1)
		rc.Spec.WorkerGroupSpecs = append(rc.Spec.WorkerGroupSpecs, extra)
	})
	h.WaitClusterRunning("gr", 90*time.Second)
	h.waitProvisioned("gr", v)
	h.WaitFor("a Running pod of group extra", 60*time.Second, func() (bool, error) {
		for _, p := range h.Pods("gr", "worker") {
			if p.Labels["ray.io/group"] == "extra" && PodRunningReady(&p) {
				return true, nil
			}
		}
		return false, nil
	})
	if d, _ := h.doctorJSON("gr"); len(d.rules("gr")) != 0 {
		t.Fatalf("doctor before the group was removed: %v", d.rules("gr"))
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, "gr", metav1.GetOptions{})
		if err != nil {
			return err
		}
		rc.Spec.WorkerGroupSpecs = rc.Spec.WorkerGroupSpecs[:1]
		_, err = h.Ray.RayV1().RayClusters(h.NS).Update(h.Ctx, rc, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the operator to see the spec without group extra", 60*time.Second, func() (bool, error) {
		rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, "gr", metav1.GetOptions{})
		return err == nil && rc.Status.ObservedGeneration == rc.Generation, err
	})
	d, res := h.doctorJSON("gr")
	wantRules(t, d, "gr", "workers-outside-spec raycluster/gr")
	f := d.finding(t, "gr", "workers-outside-spec")
	wantContains(t, "the finding", f.Message, "group extra", "worker groups are "+h.sampleCluster("x").Spec.WorkerGroupSpecs[0].GroupName)
	if res.Code != 0 {
		t.Errorf("a warning, under the default --fail-on error: want exit 0, got %s", res)
	}
	var left int
	for _, p := range h.Pods("gr", "worker") {
		if p.Labels["ray.io/group"] == "extra" && p.DeletionTimestamp == nil {
			left++
		}
	}
	if left != 1 {
		t.Errorf("the operator (%s) should leave the removed group's pod running: %d left", v.version, left)
	}
	if hd, res := h.healJSON("gr", "--dry-run"); len(hd.Plan.Actions) != 0 {
		t.Errorf("heal must leave workers-outside-spec to the user: %s", res)
	}
}
