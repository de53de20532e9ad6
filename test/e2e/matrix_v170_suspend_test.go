package e2e

import (
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// KubeRay v1.7.0's RayService has its own spec.suspend (handleSuspend): the operator deletes
// every cluster it owns and says so in the conditions Suspending, then Suspended
// (SuspendComplete). A suspended RayService has no RayCluster by the user's wish: doctor stays
// silent on it (rayservice-no-cluster would call it refused), and heal has nothing to do. Set
// back to false, the operator resumes (Suspended False, RayServiceResumed) and makes a cluster
// again. The RayService is created already suspended, so no Ray is played. About 15 s.
func matrixRayServiceSuspend(t *testing.T, h *H, v kubeRayVersion) {
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "paused", Namespace: h.NS}, Spec: rayv1.RayServiceSpec{RayClusterSpec: h.sampleCluster("x").Spec}}
	m := objectMap(t, "RayService", rs)
	m["spec"].(map[string]any)["suspend"] = true // the plugin's API types predate RayService's own suspend
	doc := mustJSON(t, m)
	h.createJSON(doc)
	h.WaitFor("the operator to say the RayService is Suspended", 60*time.Second, func() (bool, error) {
		got, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "paused", metav1.GetOptions{})
		return err == nil && meta.IsStatusConditionTrue(got.Status.Conditions, "Suspended"), err
	})
	if l, err := h.Ray.RayV1().RayClusters(h.NS).List(h.Ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("a suspended RayService owns no cluster: %v %v", err, l)
	}
	d, res := h.doctorJSON("--operator-grace", "1s", "--fail-on", "warning")
	if res.Code != 0 || len(d.Findings) != 0 {
		t.Errorf("KubeRay %s: doctor on a RayService suspended by its spec: want silent, exit 0, got %s", v.version, res)
	}
	if hd, res := h.healJSON("--dry-run", "--operator-grace", "1s"); len(hd.Plan.Actions) != 0 || len(hd.Plan.NotHealable) != 0 {
		t.Errorf("heal has nothing to do on a suspended RayService: %s", res)
	}

	if _, err := h.Ray.RayV1().RayServices(h.NS).Patch(h.Ctx, "paused", types.MergePatchType, []byte(`{"spec":{"suspend":false}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the operator to resume it and make a cluster", 60*time.Second, func() (bool, error) {
		l, err := h.Ray.RayV1().RayClusters(h.NS).List(h.Ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) > 0, err
	})
}
