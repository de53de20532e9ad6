package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// justified are the warnings doctor -f may give on KubeRay's own samples, each with the doc or
// issue its docs/rules.md section cites as recommending otherwise (a sample may carry
// a risk a doc names, never an error).
var justified = map[string]string{
	"serve-head-has-cpus": "#1153",
}

// refusedSamples are the samples KubeRay's own validation of v1.6.2 (spec-refused) refuses, each a
// true prediction: v1.1.1's custom-head-service sample names its RayCluster
// "raycluster-custom-head-service.yaml", no DNS-1035 label; v1.1.1 runs it, v1.5.0 and later
// refuse it (the sample is gone from v1.5.0's). Against the sandbox's v1.1.1 operator the finding
// says that v1.1.1 runs it.
var refusedSamples = map[string]string{
	"v1.1.1/ray-cluster.custom-head-service.yaml": "RayCluster name should be a valid DNS1035 label",
}

// droppedSamples are the fields of a release's own samples that the CRD of that same release
// drops (field-dropped), each a true prediction the test has the sandbox's API server confirm:
// v1.1.1's v1alpha1 PyTorch RayJob sets spec.runtimeEnv, which only v1.0.0's CRDs had (v1.1.0
// replaced it with runtimeEnvYAML), so on v1.1.1 the job runs without its runtime environment.
var droppedSamples = map[string]string{
	"v1.1.1/ray-job-v1alpha1.pytorch-distributed-training.yaml": "spec.runtimeEnv",
}

// KubeRay's own samples of every operator version the sandbox runs, through doctor -f offline:
// every document parses, no finding is an error, and each warning's rule is one whose section in
// docs/rules.md cites the doc that recommends otherwise, and KubeRay's validation refuses none
// but the true predictions of refusedSamples; then against the sandbox, the admission rules and
// spec-refused stay silent but for a true prediction. Costs about 5 s.
func TestDoctorManifestKubeRaySamples(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	rules, err := os.ReadFile(filepath.Join("..", "..", "docs", "rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range sandbox.Operators {
		t.Run(v, func(t *testing.T) {
			sample, err := h.SB.Config().OperatorSample(h.Ctx, v, "ray-cluster.complete.yaml")
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Dir(sample)
			res := h.Run("doctor", "-f", dir, "-R", "--offline", "-o", "json", "--fail-on", "never")
			if res.Code != 0 || res.Stderr != "" {
				t.Fatalf("doctor -f on KubeRay %s's samples: %s", v, res)
			}
			var d struct {
				Manifests struct {
					Documents int
					Errors    []string
				}
				Findings []struct {
					Rule, Severity, Message string
					Source                  struct{ File string }
					Evidence                map[string]string
				}
			}
			if err := json.Unmarshal([]byte(res.Stdout), &d); err != nil {
				t.Fatal(err)
			}
			if d.Manifests.Documents < 30 || len(d.Manifests.Errors) != 0 {
				t.Fatalf("KubeRay %s's samples: %d documents, errors %q", v, d.Manifests.Documents, d.Manifests.Errors)
			}
			seen := map[string]int{}
			for _, f := range d.Findings {
				seen[f.Rule+" "+f.Severity]++
				sample := v + "/" + filepath.Base(f.Source.File)
				switch {
				case f.Rule == "spec-refused" && refusedSamples[sample] != "" && strings.Contains(f.Message, refusedSamples[sample]):
				case f.Severity == "error":
					t.Errorf("%s: error %s on a KubeRay sample: %s", filepath.Base(f.Source.File), f.Rule, f.Message)
				case f.Severity == "warning":
					cite, ok := justified[f.Rule]
					if !ok {
						t.Errorf("%s: warning %s on a KubeRay sample, with no doc named in justified: %s", filepath.Base(f.Source.File), f.Rule, f.Message)
						continue
					}
					if !strings.Contains(section(string(rules), f.Rule), cite) {
						t.Errorf("docs/rules.md's section on %s does not cite %s", f.Rule, cite)
					}
				}
			}
			t.Logf("KubeRay %s: %d documents; findings by rule: %v", v, d.Manifests.Documents, seen)

			// Against the sandbox, in a namespace with no quota: no head is refused, and a head
			// fits no node only where it selects nodes the sandbox's have no label for (a GKE
			// node label, a GPU pool) or asks for GPUs they do not have, as the scheduler would
			// refuse it too.
			res = h.Run("doctor", "-f", dir, "-R", "-n", h.NS, "-o", "json", "--fail-on", "never")
			if res.Code != 0 || res.Stderr != "" {
				t.Fatalf("doctor -f against the sandbox on KubeRay %s's samples: %s", v, res)
			}
			d.Findings = nil
			if err := json.Unmarshal([]byte(res.Stdout), &d); err != nil {
				t.Fatal(err)
			}
			dropped := 0
			for _, f := range d.Findings {
				switch {
				case f.Rule == "field-dropped" && v == "v1.1.1" && droppedSamples[v+"/"+filepath.Base(f.Source.File)] == f.Evidence["field"]:
					h.sampleFieldRefused(f.Source.File, f.Evidence["field"])
				case f.Rule == "field-dropped" && v == "v1.1.1":
					t.Errorf("%s: field-dropped on v1.1.1's own sample against the v1.1.1 operator: %s", filepath.Base(f.Source.File), f.Message)
				case f.Rule == "field-dropped":
					dropped++ // a newer release's sample on v1.1.1: a true prediction (matrix field-dropped proves the rule)
				case f.Rule == "spec-refused" && (refusedSamples[v+"/"+filepath.Base(f.Source.File)] == "" || !strings.Contains(f.Message, "the operator here, v1.1.1, does not run this validation")):
					t.Errorf("%s: spec-refused against the sandbox's v1.1.1 operator: %s", filepath.Base(f.Source.File), f.Message)
				case f.Rule == "head-admission-refused":
					t.Errorf("%s: head-admission-refused in a namespace with no quota: %s", filepath.Base(f.Source.File), f.Message)
				case f.Rule == "head-fits-no-node" && !strings.Contains(f.Message, "node(s) didn't match Pod's node affinity/selector") &&
					!strings.Contains(f.Message, "Insufficient nvidia.com/gpu"):
					t.Errorf("%s: head-fits-no-node on the sandbox's nodes (64 CPUs, 512Gi) for another reason than a selector or GPUs: %s", filepath.Base(f.Source.File), f.Message)
				}
			}
			t.Logf("KubeRay %s's samples against the v1.1.1 operator: %d fields its CRD drops", v, dropped)
		})
	}
}

// sampleFieldRefused has the sandbox's API server confirm that it drops field of the one Ray
// document in the sample file: a strict server-side dry run names it unknown.
func (h *H) sampleFieldRefused(file, field string) {
	h.T.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		h.T.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---") {
		if !strings.Contains(doc, "apiVersion: ray.io/") {
			continue
		}
		if _, unknown := h.strictUnknownFields(doc); !slices.Equal(unknown, []string{field}) {
			h.T.Errorf("%s: the API server calls %q unknown; doctor -f predicted %s", filepath.Base(file), unknown, field)
		}
		return
	}
	h.T.Errorf("%s: no Ray document", file)
}

// section is a rule's section of docs/rules.md, "" when it has none.
func section(doc, rule string) string {
	i := strings.Index(doc, "## `"+rule+"`")
	if i < 0 {
		return ""
	}
	rest := doc[i+3:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}
