package e2e

import (
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// A RayJob with a deletionStrategy, which KubeRay refuses only while its RayJobDeletionPolicy
// feature gate is off: the v1.5 line's default (v1.6.0 turns it on). doctor -f judges it against
// the sandbox's operator: against v1.5.0 it predicts the refusal in v1.5.0's words (the plugin's
// validation is v1.6.2's, so these are read from v1.5.0's source), and the real operator then
// records exactly that Event; against v1.6.0 and v1.7.0 it says nothing. About 5 s.
func matrixSpecRefusedGated(t *testing.T, h *H, v kubeRayVersion) {
	spec := h.sampleCluster("gated").Spec
	j := &rayv1.RayJob{TypeMeta: metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayJob"}, ObjectMeta: metav1.ObjectMeta{Name: "gated", Namespace: h.NS},
		Spec: rayv1.RayJobSpec{Entrypoint: "python -c 'print(1)'", RayClusterSpec: &spec,
			DeletionStrategy: &rayv1.DeletionStrategy{DeletionRules: []rayv1.DeletionRule{
				{Policy: rayv1.DeleteCluster, Condition: rayv1.DeletionCondition{JobStatus: ptr.To(rayv1.JobStatusFailed)}}}}}}
	d, res := h.doctorJSON("-f", manifestFile(t, "gated", j))
	var refused []drFinding
	for _, f := range d.Findings {
		if f.Rule == "spec-refused" {
			refused = append(refused, f)
		}
	}
	if v.version != "v1.5.0" {
		if len(refused) != 0 {
			t.Errorf("KubeRay %s turns RayJobDeletionPolicy on by default; doctor -f says: %s", v.version, res)
		}
		return
	}
	want := h.NS + "/gated: RayJobDeletionPolicy feature gate must be enabled to use DeletionStrategy"
	if len(refused) != 1 || refused[0].Evidence["event"] != want || refused[0].Evidence["validatedAs"] != "v1.5.0" ||
		!strings.Contains(refused[0].Message, "with its default feature gates") {
		t.Fatalf("doctor -f against v1.5.0: want one gated refusal %q, got %s", want, res)
	}
	if _, err := h.Ray.RayV1().RayJobs(h.NS).Create(h.Ctx, j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitOperatorWarning("gated", "InvalidRayJobSpec")
	if got := h.warningMessages("gated", "InvalidRayJobSpec"); len(got) != 1 || got[0] != want {
		t.Errorf("the operator's Event %q, doctor -f predicted %q", got, want)
	}
}
