package e2e

import (
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// gcs-ft-finalizer-stuck and heal --remove-gcs-ft-finalizer (kuberay #1557, #4721, #4767), with no
// operator: the test plays KubeRay's part through the API. It creates the RayCluster with GCS
// fault tolerance and the finalizer the operator adds, deletes it, and creates the Redis cleanup
// Job the operator creates once the head is gone (raycluster_controller.go buildRedisCleanupJob:
// name, labels, backoffLimit 0, activeDeadlineSeconds 300), suspended as a queue such as Kueue
// holds it (kuberay #4773). The deletion time cannot be played, so the test waits out
// FinalizerStuckAfter (10m) for real.
func TestDoctorGCSFTFinalizerStuck(t *testing.T) {
	t.Parallel()
	h := newHOn(t, sandboxPlayedOperator(t, "gcsft-finalizer"))
	rc := h.CreateRayCluster("ftc", func(rc *rayv1.RayCluster) {
		rc.Annotations = map[string]string{"ray.io/ft-enabled": "true"}
		rc.Finalizers = []string{ray.FinalizerGCSFTRedisCleanup}
	})
	if err := h.Ray.RayV1().RayClusters(h.NS).Delete(h.Ctx, "ftc", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	yes, zero, deadline := true, int32(0), int64(300)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "ftc-redis-cleanup", Namespace: h.NS,
			Labels:          map[string]string{ray.LabelCluster: "ftc", ray.LabelNodeType: ray.NodeTypeRedisCleanup, ray.LabelIsRayNode: "yes"},
			Annotations:     map[string]string{ray.AnnotationExternalStorageNS: string(rc.UID)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "ftc", UID: rc.UID, Controller: &yes}}},
		Spec: batchv1.JobSpec{Suspend: &yes, BackoffLimit: &zero, ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.9.0"}}}}},
	}
	if _, err := h.Kube.BatchV1().Jobs(h.NS).Create(h.Ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deleting, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, "ftc", metav1.GetOptions{})
	if err != nil || deleting.DeletionTimestamp == nil {
		t.Fatalf("the RayCluster must be held by its finalizer: %v %+v", err, deleting)
	}

	// A deletion younger than FinalizerStuckAfter is on its way: not reported, and heal refuses the
	// flag (no finding).
	d, _ := h.doctorJSON("--fail-on", "never")
	for _, f := range d.Findings {
		if f.Rule == "gcs-ft-finalizer-stuck" {
			t.Fatalf("reported %s after the deletion started: %+v", time.Since(deleting.DeletionTimestamp.Time), f)
		}
	}
	if res := h.Run("heal", "ftc", "--remove-gcs-ft-finalizer", "--yes"); res.Code != 2 {
		t.Errorf("--remove-gcs-ft-finalizer with no finding: want exit 2: %s", res)
	}

	// The threshold (10m by default) is set to 20s with its flag, so the test does not wait 10 minutes.
	stuck := []string{"--finalizer-stuck-after", "20s"}
	time.Sleep(time.Until(deleting.DeletionTimestamp.Add(25 * time.Second)))
	d, res := h.doctorJSON(stuck...)
	if res.Code != 1 {
		t.Fatalf("gcs-ft-finalizer-stuck is an error: want exit 1: %s", res)
	}
	f := d.finding(t, "ftc", "gcs-ft-finalizer-stuck")
	wantContains(t, "gcs-ft-finalizer-stuck", f.Message, "RayCluster "+h.NS+"/ftc has been deleting for ",
		"held by finalizer ray.io/gcs-ft-redis-cleanup-finalizer", "cleanup Job ftc-redis-cleanup is suspended",
		"leaves the GCS data of storage namespace "+string(rc.UID)+" in Redis")
	wantContains(t, "remedy", f.Remedy, "kubectl ray heal ftc -n "+h.NS+" --remove-gcs-ft-finalizer")

	// heal without the flag: not healable, says how and what stays in Redis; nothing changes.
	res = h.Run(append([]string{"heal", "ftc", "--yes"}, stuck...)...)
	wantContains(t, "heal without the flag", res.Stdout, "only with --remove-gcs-ft-finalizer", "stays in Redis", "Nothing to heal")
	// --dry-run: the server-side dry run is accepted, nothing changes.
	res = h.Run(append([]string{"heal", "ftc", "--remove-gcs-ft-finalizer", "--dry-run"}, stuck...)...)
	if res.Code != 0 {
		t.Fatalf("dry run: %s", res)
	}
	wantContains(t, "dry run", res.Stdout, "would remove finalizer ray.io/gcs-ft-redis-cleanup-finalizer from RayCluster "+h.NS+"/ftc", "stays in Redis")
	if got, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, "ftc", metav1.GetOptions{}); err != nil || len(got.Finalizers) != 1 {
		t.Fatalf("after heal without the flag and --dry-run the finalizer must be there: %v %+v", err, got)
	}
	// Without --yes and without a terminal: refused, nothing changes.
	if res := h.Run(append([]string{"heal", "ftc", "--remove-gcs-ft-finalizer"}, stuck...)...); res.Code != 6 {
		t.Errorf("without --yes: want exit 6: %s", res)
	}
	// With the flag and --yes: removed; the RayCluster, held by nothing else, is gone.
	res = h.Run(append([]string{"heal", "ftc", "--remove-gcs-ft-finalizer", "--yes"}, stuck...)...)
	if res.Code != 0 {
		t.Fatalf("heal --remove-gcs-ft-finalizer --yes: %s", res)
	}
	wantContains(t, "heal", res.Stdout, "removed finalizer ray.io/gcs-ft-redis-cleanup-finalizer from RayCluster "+h.NS+"/ftc",
		"storage namespace "+string(rc.UID)+" stays in Redis", "recorded Event RayGCSFTFinalizerRemoved")
	h.WaitFor("RayCluster ftc gone", 30*time.Second, func() (bool, error) {
		_, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, "ftc", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	evs, err := h.Kube.CoreV1().Events(h.NS).List(h.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs.Items {
		if e.Reason == "RayGCSFTFinalizerRemoved" && e.InvolvedObject.Name == "ftc" && strings.Contains(e.Message, "stays in Redis") {
			found = true
		}
	}
	if !found {
		t.Errorf("no RayGCSFTFinalizerRemoved Event on RayCluster ftc")
	}
}
