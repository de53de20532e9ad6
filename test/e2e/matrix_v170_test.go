package e2e

import (
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// KubeRay v1.7.0 (and v1.6.2) removes a RayCluster's Redis cleanup finalizer itself once its head
// is gone and its deletion is older than ray.io/gcs-ft-deletion-timeout (forceRemoveGCSFTFinalizer,
// Event ForceDeletedStuckCluster). The real v1.7.0 operator: a GCS fault-tolerant cluster whose
// cleanup Job a quota of zero Jobs keeps from being created is deleted with a timeout of an hour;
// doctor, even told to call a finalizer stuck after a second, stays silent (the operator is on its
// way), and heal has nothing to remove. Its timeout lowered to a second, the operator removes
// the finalizer itself. About 20 s.
func matrixGCSFTForceRemoval(t *testing.T, h *H, v kubeRayVersion) {
	h.CreateRayCluster("ftf", func(rc *rayv1.RayCluster) {
		rc.Annotations = map[string]string{ray.AnnotationGCSFTDeletionTimeout: "3600"}
		rc.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis.invalid:6379"}
	})
	h.WaitFor("the operator's Redis cleanup finalizer and a running head", 90*time.Second, func() (bool, error) {
		rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, "ftf", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		heads := h.Pods("ftf", "head")
		return ray.HasGCSFTFinalizer(rc) && len(heads) == 1 && heads[0].Status.Phase == corev1.PodRunning, nil
	})
	h.quota("no-jobs", "count/jobs.batch", resource.MustParse("0"))
	if err := h.Ray.RayV1().RayClusters(h.NS).Delete(h.Ctx, "ftf", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the head pod to be gone", 60*time.Second, func() (bool, error) { return len(h.Pods("ftf", "head")) == 0, nil })
	time.Sleep(2 * time.Second) // the deletion older than --finalizer-stuck-after

	d, _ := h.doctorJSON("--finalizer-stuck-after", "1s", "--fail-on", "never")
	for _, f := range d.Findings {
		if f.Rule == "gcs-ft-finalizer-stuck" {
			t.Fatalf("KubeRay %s removes the finalizer itself after ray.io/gcs-ft-deletion-timeout; doctor called it stuck: %s", v.version, f.Message)
		}
	}
	if res := h.Run("heal", "ftf", "--remove-gcs-ft-finalizer", "--finalizer-stuck-after", "1s", "--yes"); res.Code != 2 {
		t.Errorf("heal must not race the operator (no finding, so the flag is refused): %s", res)
	}

	rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, "ftf", metav1.GetOptions{})
	if err != nil || !ray.HasGCSFTFinalizer(rc) {
		t.Fatalf("the finalizer must still hold the deletion: %v", err)
	}
	rc.Annotations[ray.AnnotationGCSFTDeletionTimeout] = "1"
	if _, err := h.Ray.RayV1().RayClusters(h.NS).Update(h.Ctx, rc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the operator to remove the finalizer itself", 60*time.Second, func() (bool, error) {
		_, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, "ftf", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	h.WaitFor("its ForceDeletedStuckCluster Event", 30*time.Second, func() (bool, error) {
		evs, err := h.Kube.CoreV1().Events(h.NS).List(h.Ctx, metav1.ListOptions{FieldSelector: "reason=ForceDeletedStuckCluster"})
		return err == nil && len(evs.Items) > 0, err
	})
}
