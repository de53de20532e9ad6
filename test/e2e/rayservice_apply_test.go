package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What an apply of a RayService that exists would do, judged by KubeRay's own hash:
// KubeRay's ray-service.sample.yaml of the operator's release is created as kubectl creates it
// (the API server applies the CRD's defaults), and once the operator has made its cluster (the
// pending one: Serve never becomes ready on kwok, and KubeRay compares with the pending cluster
// while there is one), doctor -f of the same file must say nothing new is prepared; of the file
// with the head's image changed, that a new RayCluster is; of the file with a worker group
// appended, that the cluster is updated in place. The hash is the operator's; if doctor's
// differed from it by one byte (a default missed, a field serialized otherwise), the first
// judgement would fail. About 5 s per version.
func matrixRayServiceApply(t *testing.T, h *H, v kubeRayVersion) {
	doc, _ := h.operatorSample(v.version, "ray-service.sample.yaml")
	name := doc["metadata"].(map[string]any)["name"].(string)
	body, _ := json.Marshal(doc)
	if err := h.Ray.RayV1().RESTClient().Post().AbsPath("/apis/ray.io/v1/namespaces/" + h.NS + "/rayservices").Body(body).Do(h.Ctx).Error(); err != nil {
		t.Fatalf("create KubeRay %s's sample RayService: %v", v.version, err)
	}
	h.WaitFor("the operator to make the RayService's cluster, with its hash", 90*time.Second, func() (bool, error) {
		rs, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cluster := rs.Status.PendingServiceStatus.RayClusterName
		if cluster == "" {
			cluster = rs.Status.ActiveServiceStatus.RayClusterName
		}
		if cluster == "" {
			return false, nil
		}
		rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, cluster, metav1.GetOptions{})
		return err == nil && rc.Annotations["ray.io/hash-without-replicas-and-workers-to-delete"] != "", nil
	})

	spec := doc["spec"].(map[string]any)["rayClusterConfig"].(map[string]any)
	verdict := func(label string, edit func()) string {
		t.Helper()
		var copied map[string]any
		_ = json.Unmarshal(body, &copied)
		doc = copied
		spec = doc["spec"].(map[string]any)["rayClusterConfig"].(map[string]any)
		edit()
		file := manifestFile(t, label, doc)
		d, res := h.doctorJSON("-f", file, "-n", h.NS, "--fail-on", "never")
		if res.Code != 0 {
			t.Fatalf("doctor -f (%s): %s", label, res)
		}
		for _, f := range d.Findings {
			if f.Rule == "exists-in-cluster" && f.Object.Kind == "RayService" {
				t.Logf("%s: %s", label, f.Message)
				return f.Evidence["verdict"] + ": " + f.Message
			}
		}
		t.Fatalf("doctor -f (%s): no exists-in-cluster for the RayService\n%s", label, res)
		return ""
	}
	if got := verdict("same", func() {}); !strings.HasPrefix(got, "unchanged: ") {
		t.Errorf("KubeRay %s, the document as applied: %s; want unchanged (KubeRay's hash of it equals its cluster's)", v.version, got)
	}
	head := func() map[string]any {
		tmpl := spec["headGroupSpec"].(map[string]any)["template"].(map[string]any)
		return tmpl["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	}
	if got := verdict("new-image", func() { head()["image"] = head()["image"].(string) + "-changed" }); !strings.HasPrefix(got, "new-cluster: ") {
		t.Errorf("KubeRay %s, the head's image changed: %s; want a new cluster", v.version, got)
	}
	if got := verdict("appended", func() {
		groups := spec["workerGroupSpecs"].([]any)
		extra := map[string]any{}
		for k, val := range groups[0].(map[string]any) {
			extra[k] = val
		}
		extra["groupName"] = "appended-group"
		spec["workerGroupSpecs"] = append(groups, extra)
	}); !strings.HasPrefix(got, "in-place: ") {
		t.Errorf("KubeRay %s, a worker group appended: %s; want in place", v.version, got)
	}
}
