package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// gcs-store-shared: KubeRay v1.7.0's embedded GCS fault tolerance (backend: rocksdb; the matrix's
// v1.7.0 sandbox turns GCSFaultToleranceEmbeddedStorage on). A claim bound to a hostPath volume
// by the sandbox's controller-manager; RayCluster gcs-a keeps its GCS on it (storage.claimName)
// and the real operator mounts it on gcs-a's head: doctor says nothing of gcs-a. RayCluster gcs-b,
// copied from it, names the same claim, and the operator mounts it on gcs-b's head too. RocksDB's
// lock refuses the second GCS; no Ray runs here, so the kubelet's side is played: gcs-b's Ray
// container exits over and over (play.KubeletCrashLoop). doctor names the shared store on gcs-b,
// the holder gcs-a, and exits 1. RayCluster gcs-c names a claim nobody made: the scheduler
// refuses its head, and head-pending's fix is the claim, not capacity. A RayService document
// whose generations would share the claim gets gcs-store-upgrade-blocked from doctor -f against
// this operator. About 3 s.
func matrixGCSStoreShared(t *testing.T, h *H, v kubeRayVersion) {
	pvc := h.boundClaim("shared-gcs")
	create := func(name, claim string) {
		m := objectMap(t, "RayCluster", h.sampleCluster(name))
		// The plugin's API types predate backend and storage.
		m["spec"].(map[string]any)["gcsFaultToleranceOptions"] = map[string]any{"backend": "rocksdb", "storage": map[string]any{"claimName": claim}}
		h.createJSON(mustJSON(t, m))
	}

	create("gcs-a", pvc.Name)
	h.WaitClusterRunning("gcs-a", 90*time.Second)
	d, res := h.doctorJSON("--operator-grace", "1s")
	if got := d.rules("gcs-a"); len(got) != 0 || res.Code != 0 {
		t.Errorf("KubeRay %s: one RayCluster on its RocksDB store: want silent, exit 0; got %v, %s", v.version, got, res)
	}

	create("gcs-b", pvc.Name)
	head := h.WaitClusterRunning("gcs-b", 90*time.Second)
	if s, ok := ray.GCSStoreOf(&head); !ok || s.Claim != pvc.Name {
		t.Fatalf("KubeRay %s mounts gcs-b's store as %+v (%v), want claim %s: the case tests nothing", v.version, s, ok, pvc.Name)
	}
	if _, err := play.KubeletCrashLoop(h.Ctx, h.Kube, h.NS, head.Name, "Error", 3); err != nil {
		t.Fatal(err)
	}
	d, res = h.doctorJSON("--operator-grace", "1s")
	f := d.finding(t, "gcs-b", "gcs-store-shared")
	wantContains(t, "gcs-store-shared", f.Message, "RayCluster "+h.NS+"/gcs-b keeps its GCS in the RocksDB store on PVC shared-gcs, which the head of RayCluster gcs-a", "RocksDB admits one writer")
	wantContains(t, "gcs-store-shared's remedy", f.Remedy, "remove spec.gcsFaultToleranceOptions.storage.claimName from gcs-b")
	if f.Severity != "error" || f.Evidence["holder"] != "gcs-a" || f.Evidence["claim"] != pvc.Name || f.Evidence["pod"] != head.Name || res.Code != 1 {
		t.Errorf("want an error on gcs-b's head, holder gcs-a, exit 1; got %+v, %s", f, res)
	}
	for _, f := range d.Findings {
		if f.Rule == "gcs-store-shared" && f.Cluster != nil && f.Cluster.Name == "gcs-a" {
			t.Errorf("the store's holder gcs-a is not at fault: %s", f.Message)
		}
	}

	// A RayService whose every generation would share the claim, as a document against this
	// operator: its next zero-downtime upgrade could not complete (the live rule reads the
	// active cluster's head; its fixtures hold it).
	rs := objectMap(t, "RayService", &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "shared-svc", Namespace: h.NS},
		Spec: rayv1.RayServiceSpec{RayClusterSpec: h.sampleCluster("x").Spec}})
	rs["spec"].(map[string]any)["rayClusterConfig"].(map[string]any)["gcsFaultToleranceOptions"] = map[string]any{"backend": "rocksdb", "storage": map[string]any{"claimName": pvc.Name}}
	file := filepath.Join(t.TempDir(), "shared-svc.yaml")
	doc, err := yaml.JSONToYAML(mustJSON(t, rs))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	fd, res := h.doctorJSON("-f", file)
	uf := fd.finding(t, "shared-svc", "gcs-store-upgrade-blocked")
	wantContains(t, "doctor -f", uf.Message, "RayService "+h.NS+"/shared-svc keeps its GCS in a RocksDB store on PVC shared-gcs", "its next NewCluster upgrade")
	if uf.Field != "spec.rayClusterConfig.gcsFaultToleranceOptions.storage.claimName" || uf.Severity != "warning" {
		t.Errorf("doctor -f: want a warning at storage.claimName; got %+v, %s", uf, res)
	}

	// A claim nobody made: the operator mounts it all the same, and the scheduler refuses the head.
	create("gcs-c", "absent")
	h.WaitFor("the scheduler to refuse gcs-c's head", 60*time.Second, func() (bool, error) {
		for _, p := range h.Pods("gcs-c", "head") {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
					return true, nil
				}
			}
		}
		return false, nil
	})
	d, res = h.doctorJSON("--operator-grace", "1s")
	pf := d.finding(t, "gcs-c", "head-pending")
	wantContains(t, "head-pending", pf.Message, `persistentvolumeclaim "absent" not found`, "(PVC absent holds the head's RocksDB GCS store)")
	wantContains(t, "head-pending's remedy", pf.Remedy, "create PVC absent in namespace "+h.NS, "the operator makes gcs-c-gcs-pvc")
	if pf.Evidence["gcsStoreClaim"] != "absent" {
		t.Errorf("head-pending on a missing store claim: %+v\n%s", pf, res)
	}
}

// boundClaim makes a ReadWriteMany claim named name bound to a hostPath volume of its own (the
// sandbox's controller-manager binds them; kwok's nodes mount nothing), and waits for the binding.
func (h *H) boundClaim(name string) *corev1.PersistentVolumeClaim {
	h.T.Helper()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + h.NS}, Spec: corev1.PersistentVolumeSpec{
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/ray-gcs/" + h.NS + "/" + name}},
	}}
	if _, err := h.Kube.CoreV1().PersistentVolumes().Create(h.Ctx, pv, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	h.T.Cleanup(func() { _ = h.Kube.CoreV1().PersistentVolumes().Delete(h.Ctx, pv.Name, metav1.DeleteOptions{}) })
	noClass := ""
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.NS}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
		StorageClassName: &noClass,
		VolumeName:       pv.Name,
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}}
	if _, err := h.Kube.CoreV1().PersistentVolumeClaims(h.NS).Create(h.Ctx, pvc, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	h.WaitFor("the controller-manager to bind claim "+name, 60*time.Second, func() (bool, error) {
		got, err := h.Kube.CoreV1().PersistentVolumeClaims(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
		return err == nil && got.Status.Phase == corev1.ClaimBound, err
	})
	return pvc
}

// gcs-store-rayservice: a RayService on KubeRay v1.7.0's embedded GCS store whose every
// generation names one claim (storage.claimName), made Ready by the real operator with the Ray
// stand-ins (play.StartRay) and kwok: nothing is wrong yet, and doctor warns, from the active
// cluster's head, that its next zero-downtime upgrade cannot complete. About 10 s.
func matrixGCSStoreRayService(t *testing.T, h *H, v kubeRayVersion) {
	pvc := h.boundClaim("kept-gcs")
	startRay(h, play.RayOptions{DeployTime: time.Second})
	rs := objectMap(t, "RayService", h.sampleRayService("kept", v.version, func(rs *rayv1.RayService) {
		rs.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0"}
	}))
	rs["spec"].(map[string]any)["rayClusterConfig"].(map[string]any)["gcsFaultToleranceOptions"] = map[string]any{"backend": "rocksdb", "storage": map[string]any{"claimName": pvc.Name}}
	h.createJSON(mustJSON(t, rs))
	active := h.waitRayServiceActive("kept")
	d, res := h.doctorJSON("--operator-grace", "1s")
	f := d.finding(t, active, "gcs-store-upgrade-blocked")
	wantContains(t, "gcs-store-upgrade-blocked", f.Message, "RayService "+h.NS+"/kept keeps its GCS in a RocksDB store on PVC kept-gcs (head pod ", "its next NewCluster upgrade")
	if f.Severity != "warning" || f.Evidence["claim"] != pvc.Name || res.Code != 0 {
		t.Errorf("KubeRay %s: want a warning on the active cluster %s, exit 0; got %+v, %s", v.version, active, f, res)
	}
	for _, g := range d.Findings {
		if g.Rule == "gcs-store-shared" {
			t.Errorf("one cluster holds the store: %s", g.Message)
		}
	}
}
