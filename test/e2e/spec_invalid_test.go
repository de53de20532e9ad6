package e2e

import (
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// spec-invalid: a head with rayStartParams labels, which KubeRay v1.5.0 and v1.6.0 refuse
// (ValidateRayClusterSpec: "rayStartParams['labels'] is not supported for Head group") and v1.1.1
// accepts. Nothing is played. Where refused, doctor says why there is no head (spec-invalid, not
// head-missing); once the spec is fixed the operator creates the cluster and doctor is silent.
func matrixSpecInvalid(t *testing.T, h *H, v kubeRayVersion) {
	h.CreateRayCluster("inv", func(rc *rayv1.RayCluster) {
		rc.Spec.HeadGroupSpec.RayStartParams["labels"] = "team=ml"
	})
	if v.version == "v1.1.1" {
		h.WaitClusterRunning("inv", 90*time.Second)
		if d, res := h.doctorJSON("--operator-grace", "1s"); len(d.rules("inv")) != 0 {
			t.Fatalf("KubeRay v1.1.1 validates nothing, yet: %v\n%s", d.rules("inv"), res)
		}
		return
	}
	h.waitOperatorWarning("inv", "InvalidRayClusterSpec")
	time.Sleep(2 * time.Second) // past --operator-grace: head-missing would judge the cluster now
	d, res := h.doctorJSON("--operator-grace", "1s")
	f := d.finding(t, "inv", "spec-invalid")
	wantContains(t, "message", f.Message, "the operator refuses its spec and reconciles nothing of it",
		"rayStartParams['labels'] is not supported for Head group", "generation 1, observed 0")
	wantContains(t, "remedy", f.Remedy, "kubectl edit raycluster inv -n "+h.NS)
	if got := d.rules("inv"); len(got) != 1 || res.Code != 1 {
		t.Errorf("findings %v (want spec-invalid alone, no head-missing), exit %d\n%s", got, res.Code, res)
	}

	patch := []byte(`[{"op":"remove","path":"/spec/headGroupSpec/rayStartParams/labels"}]`)
	if _, err := h.Ray.RayV1().RayClusters(h.NS).Patch(h.Ctx, "inv", types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitClusterRunning("inv", 90*time.Second)
	h.WaitFor("the operator's status of generation 2", 60*time.Second, func() (bool, error) {
		rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, "inv", metav1.GetOptions{})
		return err == nil && rc.Status.ObservedGeneration == rc.Generation, err
	})
	if d, res := h.doctorJSON("--operator-grace", "1s"); len(d.rules("inv")) != 0 {
		t.Fatalf("after the fix: %v\n%s", d.rules("inv"), res)
	}
}
