package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// fieldDroppedDocs are three documents whose fields some KubeRay releases' CRDs lack:
// excludeHeadPodFromServeSvc (v1.3.0 and later), a RayJob's deletionPolicy (v1.3.0 to v1.4.2
// only) and a worker group's suspend under ray.io/v1alpha1 (which never got it).
var fieldDroppedDocs = []string{`apiVersion: ray.io/v1
kind: RayService
metadata:
  name: serve
spec:
  excludeHeadPodFromServeSvc: true
  serveConfigV2: |
    applications: []
  rayClusterConfig:
    headGroupSpec:
      rayStartParams:
        num-cpus: "0"
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.9.0
`, `apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: job
spec:
  entrypoint: python -c "print(1)"
  shutdownAfterJobFinishes: true
  deletionPolicy: DeleteCluster
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.9.0
`, `apiVersion: ray.io/v1alpha1
kind: RayCluster
metadata:
  name: old-api
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:2.9.0
  workerGroupSpecs:
  - groupName: small
    suspend: true
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.9.0
`}

var unknownFieldRE = regexp.MustCompile(`unknown field "([^"]+)"`)

// field-dropped: doctor -f names, for each document, the fields the CRD of the operator here lacks;
// then the API server of that sandbox, which runs that release's CRDs, is asked to create each
// document (a server-side dry run, strict field validation as kubectl asks for it) and must
// refuse exactly the fields doctor named, no more, no fewer. Nothing is played, nothing is
// created. About 0.5 s per version.
func matrixFieldDropped(t *testing.T, h *H, v kubeRayVersion) {
	file := filepath.Join(t.TempDir(), "docs.yaml")
	if err := os.WriteFile(file, []byte(strings.Join(fieldDroppedDocs, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	d, res := h.doctorJSON("-f", file, "-n", h.NS, "--fail-on", "never")
	if res.Code != 0 {
		t.Fatalf("doctor -f: %s", res)
	}
	predicted := map[string][]string{}
	for _, f := range d.Findings {
		if f.Rule == "field-dropped" {
			predicted[f.Object.Kind] = append(predicted[f.Object.Kind], f.Evidence["field"])
			if v.version != "v1.1.1" || f.Object.Kind != "RayService" {
				continue
			}
			wantContains(t, "message", f.Message, "KubeRay v1.1.1, the operator here, has no field spec.excludeHeadPodFromServeSvc (KubeRay v1.3.0 and later have it)")
		}
	}
	want := map[string][]string{"RayJob": {"spec.deletionPolicy"}, "RayCluster": {"spec.workerGroupSpecs[0].suspend"}}
	if v.version == "v1.1.1" {
		want["RayService"] = []string{"spec.excludeHeadPodFromServeSvc"}
	}
	for _, kind := range []string{"RayService", "RayJob", "RayCluster"} {
		if !slices.Equal(predicted[kind], want[kind]) {
			t.Errorf("KubeRay %s, %s: doctor -f predicted %q dropped, want %q\n%s", v.version, kind, predicted[kind], want[kind], res)
		}
	}

	// The API server's word on each document, as kubectl apply asks for it.
	for _, doc := range fieldDroppedDocs {
		kind, refused := h.strictUnknownFields(doc)
		if !slices.Equal(refused, predicted[kind]) {
			t.Errorf("KubeRay %s's API server refused %s fields %q; doctor -f predicted %q", v.version, kind, refused, predicted[kind])
		}
	}
}

// strictUnknownFields asks the sandbox's API server to create the Ray document doc in h.NS as
// kubectl apply does (strict field validation), in a server-side dry run that creates nothing,
// and returns its kind and the fields the API server calls unknown. Any other refusal fails the test.
func (h *H) strictUnknownFields(doc string) (kind string, unknown []string) {
	h.T.Helper()
	body, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		h.T.Fatal(err)
	}
	var meta struct{ APIVersion, Kind string }
	if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
		h.T.Fatal(err)
	}
	path := "/apis/" + meta.APIVersion + "/namespaces/" + h.NS + "/" + strings.ToLower(meta.Kind) + "s"
	err = h.Ray.RayV1().RESTClient().Post().AbsPath(path).Param("dryRun", "All").Param("fieldValidation", "Strict").
		Body(body).Do(h.Ctx).Error()
	if err == nil {
		return meta.Kind, nil
	}
	for _, m := range unknownFieldRE.FindAllStringSubmatch(err.Error(), -1) {
		unknown = append(unknown, m[1])
	}
	if len(unknown) == 0 {
		h.T.Fatalf("the API server refused the %s for another reason: %v", meta.Kind, err)
	}
	return meta.Kind, unknown
}
