package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// resources-invalid: KubeRay's sample cluster with its workers asking for 1 nvidia.com/gpu under
// a limit of 2. doctor -f names the field before anything is applied (pod-resources-invalid,
// exit 1); the RayCluster is then created, which the API server accepts, and the operator's every
// worker pod is refused by the same API server: the operator reports the refusal its own way, and
// live doctor finds both the cause and the workers missing, with the API server's words. Nothing
// is played. About 5 s per version.
func matrixResourcesInvalid(t *testing.T, h *H, v kubeRayVersion) {
	rc := h.sampleCluster("gpu")
	rc.TypeMeta = metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayCluster"}
	rc.Namespace = h.NS
	r := &rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Resources
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	if r.Limits == nil {
		r.Limits = corev1.ResourceList{}
	}
	r.Requests["nvidia.com/gpu"], r.Limits["nvidia.com/gpu"] = resource.MustParse("1"), resource.MustParse("2")
	file := manifestFile(t, "gpu", rc)
	d, res := h.doctorJSON("-f", file, "-n", h.NS)
	f := d.finding(t, "gpu", "pod-resources-invalid")
	if res.Code != 1 || f.Field != "spec.workerGroupSpecs[0].template.spec.containers[0].resources.requests.nvidia.com/gpu" {
		t.Errorf("doctor -f: exit %d (want 1), field %q\n%s", res.Code, f.Field, res)
	}
	wantContains(t, "message", f.Message, "requests 1 nvidia.com/gpu with a limit of 2", "the API server refuses every pod of the group")

	// Applied: accepted, and every worker refused by the API server.
	if _, err := h.Ray.RayV1().RayClusters(h.NS).Create(h.Ctx, rc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the API server should accept the RayCluster itself: %v", err)
	}
	refused := "FailedToCreateWorkerPod"
	if v.version == "v1.1.1" {
		refused = "PodReconciliationError"
	}
	h.waitOperatorWarning("gpu", refused)
	time.Sleep(2 * time.Second) // workers-missing judges a cluster older than --operator-grace (1s) only
	d, res = h.doctorJSON("--operator-grace", "1s")
	live := d.finding(t, "gpu", "pod-resources-invalid")
	missing := d.finding(t, "gpu", "workers-missing")
	if live.Field != f.Field || !strings.Contains(missing.Message, "nvidia.com/gpu") {
		t.Errorf("live: pod-resources-invalid at %q, workers-missing %q; want the same field, and the API server's refusal naming nvidia.com/gpu\n%s",
			live.Field, missing.Message, res)
	}
	if n := len(h.Pods("gpu", "worker")); n != 0 {
		t.Errorf("%d worker pods exist; the API server should refuse every one", n)
	}
}
