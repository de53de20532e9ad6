package ray

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"
)

// serveSpec is a RayService's cluster spec as written in a document: ports with no protocol,
// worker bounds and numOfHosts left to the CRD's defaults.
func serveSpec() *rayv1.RayClusterSpec {
	one := int32(1)
	return &rayv1.RayClusterSpec{
		RayVersion: "2.52.0",
		HeadGroupSpec: rayv1.HeadGroupSpec{RayStartParams: map[string]string{}, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.52.0",
				Ports: []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 8265}}}}}}},
		WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "small-group", Replicas: &one, RayStartParams: map[string]string{},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.52.0"}}}}}},
	}
}

// storedCluster is the cluster KubeRay release made of spec: the spec as the API server stored
// it (the CRD's defaults), and the annotations KubeRay wrote.
func storedCluster(t *testing.T, spec *rayv1.RayClusterSpec, release string) *ComparedCluster {
	t.Helper()
	v := version.MustParseSemantic(release)
	stored := spec.DeepCopy()
	crdDefaults(stored, v)
	h, err := clusterHash(stored, hashings[release[:4]])
	if err != nil {
		t.Fatal(err)
	}
	return &ComparedCluster{Name: "svc-raycluster-abcde", Hash: h, NumWorkerGroups: "1", KubeRayVersion: release, Spec: stored}
}

func TestJudgeApply(t *testing.T) {
	for _, release := range []string{"v1.1.1", "v1.5.0", "v1.6.0"} {
		t.Run(release, func(t *testing.T) {
			cc := storedCluster(t, serveSpec(), release)
			if release == "v1.1.1" {
				cc.KubeRayVersion = "" // v1.1.1 writes none
			}
			for _, tc := range []struct {
				name string
				edit func(*rayv1.RayClusterSpec)
				want ApplyVerdict
			}{
				// Unchanged only if the document is defaulted as the API server stores it: the
				// port's protocol TCP, the workers' bounds and numOfHosts.
				{"the same document", func(*rayv1.RayClusterSpec) {}, VerdictUnchanged},
				{"more replicas", func(s *rayv1.RayClusterSpec) { n := int32(3); s.WorkerGroupSpecs[0].Replicas = &n }, VerdictUnchanged},
				{"a new head image", func(s *rayv1.RayClusterSpec) {
					s.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
				}, VerdictNewCluster},
				{"a worker group appended", func(s *rayv1.RayClusterSpec) {
					g := *s.WorkerGroupSpecs[0].DeepCopy()
					g.GroupName = "extra"
					s.WorkerGroupSpecs = append(s.WorkerGroupSpecs, g)
				}, VerdictAppended},
				{"a worker group put first", func(s *rayv1.RayClusterSpec) {
					g := *s.WorkerGroupSpecs[0].DeepCopy()
					g.GroupName = "extra"
					s.WorkerGroupSpecs = append([]rayv1.WorkerGroupSpec{g}, s.WorkerGroupSpecs...)
				}, VerdictNewCluster},
			} {
				doc := serveSpec()
				tc.edit(doc)
				if got, why := JudgeApply(doc, cc, release); got != tc.want {
					t.Errorf("%s: verdict %d (%s), want %d", tc.name, got, why, tc.want)
				}
			}
		})
	}
	t.Run("maxReplicas counts in v1.1 only", func(t *testing.T) {
		doc := serveSpec()
		n := int32(5)
		doc.WorkerGroupSpecs[0].MaxReplicas = &n
		if got, _ := JudgeApply(doc, storedCluster(t, serveSpec(), "v1.1.1"), "v1.1.1"); got != VerdictNewCluster {
			t.Errorf("v1.1.1: verdict %d, want a new cluster", got)
		}
		if got, _ := JudgeApply(doc, storedCluster(t, serveSpec(), "v1.5.0"), "v1.5.0"); got != VerdictUnchanged {
			t.Errorf("v1.5.0: verdict %d, want unchanged", got)
		}
	})
	t.Run("tolerations count before v1.6", func(t *testing.T) {
		doc := serveSpec()
		doc.HeadGroupSpec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "kueue", Operator: corev1.TolerationOpExists}}
		if got, _ := JudgeApply(doc, storedCluster(t, serveSpec(), "v1.6.0"), "v1.6.0"); got != VerdictUnchanged {
			t.Errorf("v1.6.0: verdict %d, want unchanged", got)
		}
		if got, _ := JudgeApply(doc, storedCluster(t, serveSpec(), "v1.5.0"), "v1.5.0"); got != VerdictNewCluster {
			t.Errorf("v1.5.0: verdict %d, want a new cluster", got)
		}
	})
	t.Run("a pending cluster another release made is compared as it is", func(t *testing.T) {
		cc := storedCluster(t, serveSpec(), "v1.6.0")
		cc.Pending, cc.KubeRayVersion = true, "v1.5.0"
		if got, why := JudgeApply(serveSpec(), cc, "v1.6.0"); got != VerdictUnchanged {
			t.Errorf("verdict %d (%s), want unchanged", got, why)
		}
	})
	t.Run("v1.1 compares a pending cluster's spec", func(t *testing.T) {
		cc := storedCluster(t, serveSpec(), "v1.1.1")
		cc.Pending, cc.Hash, cc.NumWorkerGroups = true, "", ""
		if got, why := JudgeApply(serveSpec(), cc, "v1.1.1"); got != VerdictUnchanged {
			t.Errorf("verdict %d (%s), want unchanged", got, why)
		}
	})
	for _, tc := range []struct {
		name, release string
		edit          func(*ComparedCluster)
	}{
		{"a release whose hash is not known here", "v1.3.0", func(*ComparedCluster) {}},
		{"no release", "", func(*ComparedCluster) {}},
		{"a cluster without the annotation", "v1.5.0", func(c *ComparedCluster) { c.Hash = "" }},
		{"an active cluster another release made", "v1.6.0", func(c *ComparedCluster) { c.KubeRayVersion = "v1.5.0" }},
	} {
		cc := storedCluster(t, serveSpec(), "v1.5.0")
		tc.edit(cc)
		if got, why := JudgeApply(serveSpec(), cc, tc.release); got != VerdictUnknown || why == "" {
			t.Errorf("%s: verdict %d (%q), want unknown with a reason", tc.name, got, why)
		}
	}
}

// From v1.5.0 the CRDs default a few volume plugins' fields; v1.1.1's default none of them.
func TestCRDDefaultsOfVolumes(t *testing.T) {
	spec := func() *rayv1.RayClusterSpec {
		s := serveSpec()
		s.HeadGroupSpec.Template.Spec.Volumes = []corev1.Volume{{Name: "ceph", VolumeSource: corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{RBDImage: "img"}}}}
		return s
	}
	v15, v11 := spec(), spec()
	crdDefaults(v15, version.MustParseSemantic("v1.5.0"))
	crdDefaults(v11, version.MustParseSemantic("v1.1.1"))
	if r := v15.HeadGroupSpec.Template.Spec.Volumes[0].RBD; r.RBDPool != "rbd" || r.RadosUser != "admin" || r.Keyring != "/etc/ceph/keyring" {
		t.Errorf("v1.5.0: rbd defaults %+v", r)
	}
	if r := v11.HeadGroupSpec.Template.Spec.Volumes[0].RBD; r.RBDPool != "" {
		t.Errorf("v1.1.1 defaults rbd's pool: %+v", r)
	}
	if p := v11.HeadGroupSpec.Template.Spec.Containers[0].Ports[0].Protocol; p != corev1.ProtocolTCP {
		t.Errorf("v1.1.1: port protocol %q, want TCP", p)
	}
}

// KubeRay v1.1.1 hashes the JSON its own types write (older API machinery: "creationTimestamp":
// null in each pod template's metadata). testdata/hash/*.v1.1.1.json were written by v1.1.1's
// types (json.Marshal of the spec of the YAML beside them, in a module requiring ray-operator
// v1.1.1): the hashing of v1.1 must write the same bytes from these types.
func TestV11WritesV111sJSON(t *testing.T) {
	for _, name := range []string{"sample-v1.1.1", "rich"} {
		doc, err := os.ReadFile(filepath.Join("testdata", "hash", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", "hash", name+".v1.1.1.json"))
		if err != nil {
			t.Fatal(err)
		}
		rs := &rayv1.RayService{}
		if err := yaml.Unmarshal(doc, rs); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(rs.Spec.RayClusterSpec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := withNullCreationTimestamps(b, &rs.Spec.RayClusterSpec)
		if err != nil {
			t.Fatal(err)
		}
		if got, err = v111Order.reorder(got); err != nil {
			t.Fatal(err)
		}
		if string(got) != strings.TrimSpace(string(want)) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

// KubeRay v1.7.0's CRD stores each worker group's priority (default 0), which its types write
// after idleTimeoutSeconds and these types do not hold; and v1.7.0 hashes the spec with suspend
// cleared (rayClusterSpecForHashing). The sandbox's e2e case rayservice-apply compares the result
// with the hash the real v1.7.0 operator writes.
func TestV17HashesAsItsCRDStores(t *testing.T) {
	spec := serveSpec()
	crdDefaults(spec, version.MustParseSemantic("v1.7.0"))
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := withWorkerPriority(b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(stored), `"maxReplicas":2147483647,"priority":0,"rayStartParams":{}`) {
		t.Errorf("priority is not where v1.7.0's types write it:\n%s", stored)
	}
	if !strings.HasPrefix(string(stored), `{"headGroupSpec":`) || !strings.Contains(string(stored), `"rayVersion":"2.52.0"`) {
		t.Errorf("the spec's own fields moved or were lost:\n%s", stored)
	}

	suspended := spec.DeepCopy()
	yes := true
	suspended.Suspend = &yes
	h17, _ := clusterHash(spec, hashings["v1.7"])
	h17s, _ := clusterHash(suspended, hashings["v1.7"])
	h16, _ := clusterHash(spec, hashings["v1.6"])
	h16s, _ := clusterHash(suspended, hashings["v1.6"])
	if h17 != h17s {
		t.Error("v1.7.0 hashes spec.suspend; it clears it first")
	}
	if h16 == h16s {
		t.Error("v1.6.0 does not hash spec.suspend; it does")
	}
	if h17 == h16 {
		t.Error("v1.7.0's hash equals v1.6.0's: the stored priority is missing")
	}
}
