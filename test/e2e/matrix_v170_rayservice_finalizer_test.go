package e2e

import (
	"slices"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// rayServiceFinalizer is the finalizer KubeRay v1.7.0 (and v1.6.2) puts on every RayService: a
// deleted RayService waits until the RayClusters it deletes are gone (rayservice_controller.go).
const rayServiceFinalizer = "ray.io/rayservice-finalizer"

// KubeRay v1.7.0 holds a deleted RayService with its own finalizer until its RayClusters are
// gone, and a GCS fault-tolerant cluster with the Redis cleanup finalizer until its cleanup Job
// ends or its ray.io/gcs-ft-deletion-timeout passes. The real v1.7.0 operator: a RayService
// whose cluster's cleanup Job a quota of zero Jobs keeps from being created is deleted, with a
// timeout of an hour (copied from the RayService's annotations to its cluster). Both objects
// wait on the operator, which is on its way: doctor, told to call a finalizer stuck after a
// second, says nothing of either, and heal has nothing to do. Its timeout lowered to a second,
// the operator releases the cluster and then the RayService itself. About 25 s.
func matrixRayServiceFinalizer(t *testing.T, h *H, v kubeRayVersion) {
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "fin", Namespace: h.NS,
		Annotations: map[string]string{ray.AnnotationGCSFTDeletionTimeout: "3600"}},
		Spec: rayv1.RayServiceSpec{RayClusterSpec: h.sampleCluster("x").Spec}}
	rs.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0"} // no Serve replica on the head
	rs.Spec.RayClusterSpec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis.invalid:6379"}
	if _, err := h.Ray.RayV1().RayServices(h.NS).Create(h.Ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var cluster string
	h.WaitFor("the RayService's finalizer, and its cluster's Redis cleanup finalizer with a running head", 90*time.Second, func() (bool, error) {
		got, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "fin", metav1.GetOptions{})
		if err != nil || !slices.Contains(got.Finalizers, rayServiceFinalizer) {
			return false, err
		}
		l, err := h.Ray.RayV1().RayClusters(h.NS).List(h.Ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != 1 || !ray.HasGCSFTFinalizer(&l.Items[0]) {
			return false, err
		}
		cluster = l.Items[0].Name
		heads := h.Pods(cluster, "head")
		return len(heads) == 1 && heads[0].Status.Phase == corev1.PodRunning, nil
	})
	h.quota("no-jobs", "count/jobs.batch", resource.MustParse("0"))
	if err := h.Ray.RayV1().RayServices(h.NS).Delete(h.Ctx, "fin", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the operator to delete the RayService's cluster and its head to be gone", 60*time.Second, func() (bool, error) {
		rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, cluster, metav1.GetOptions{})
		return err == nil && rc.DeletionTimestamp != nil && len(h.Pods(cluster, "head")) == 0, err
	})
	time.Sleep(2 * time.Second) // both deletions older than --finalizer-stuck-after

	d, res := h.doctorJSON("--finalizer-stuck-after", "1s", "--operator-grace", "1s", "--fail-on", "never")
	for _, f := range d.Findings {
		t.Errorf("KubeRay %s releases both finalizers itself; doctor said %s: %s", v.version, f.Rule, f.Message)
	}
	if t.Failed() {
		t.Logf("doctor: %s", res)
	}
	if hd, res := h.healJSON("--dry-run", "--finalizer-stuck-after", "1s", "--operator-grace", "1s"); len(hd.Plan.Actions) != 0 {
		t.Errorf("heal must not race the operator: %s", res)
	}
	got, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "fin", metav1.GetOptions{})
	if err != nil || got.DeletionTimestamp == nil || !slices.Contains(got.Finalizers, rayServiceFinalizer) {
		t.Fatalf("the RayService's finalizer must still hold its deletion: %v", err)
	}

	patch := `{"metadata":{"annotations":{"` + ray.AnnotationGCSFTDeletionTimeout + `":"1"}}}`
	if _, err := h.Ray.RayV1().RayClusters(h.NS).Patch(h.Ctx, cluster, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the operator to release the cluster, then the RayService", 60*time.Second, func() (bool, error) {
		_, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "fin", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, cluster, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the RayService is gone before its cluster: %v", err)
	}
}
