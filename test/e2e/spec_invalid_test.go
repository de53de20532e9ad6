package e2e

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// spec-invalid: a head with rayStartParams labels, which KubeRay v1.5.0 and v1.6.0 refuse
// (ValidateRayClusterSpec: "rayStartParams['labels'] is not supported for Head group") and v1.1.1
// accepts. Nothing is played. Before the apply, doctor -f predicts the refusal (spec-refused,
// doctor -f) in the words of the Event the operator then records; where refused, doctor says why
// there is no head (spec-invalid, not head-missing); once the spec is fixed the operator creates
// the cluster and doctor is silent. doctor -f adds about 0.3 s per version.
func matrixSpecInvalid(t *testing.T, h *H, v kubeRayVersion) {
	inv := h.sampleCluster("inv")
	inv.Spec.HeadGroupSpec.RayStartParams["labels"] = "team=ml"
	predicted := h.specRefused(inv, "inv", v)
	if _, err := h.Ray.RayV1().RayClusters(h.NS).Create(h.Ctx, inv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if v.version == "v1.1.1" {
		h.WaitClusterRunning("inv", 90*time.Second)
		if d, res := h.doctorJSON("--operator-grace", "1s"); len(d.rules("inv")) != 0 {
			t.Fatalf("KubeRay v1.1.1 validates nothing, yet: %v\n%s", d.rules("inv"), res)
		}
		return
	}
	h.waitOperatorWarning("inv", "InvalidRayClusterSpec")
	if got := h.warningMessages("inv", "InvalidRayClusterSpec"); len(got) != 1 || got[0] != predicted {
		t.Errorf("the operator's Event %q, doctor -f predicted %q", got, predicted)
	}
	time.Sleep(2 * time.Second) // past --operator-grace: head-missing would judge the cluster now
	d, res := h.doctorJSON("--operator-grace", "1s")
	f := d.finding(t, "inv", "spec-invalid")
	wantContains(t, "message", f.Message, "the operator refuses its spec and reconciles nothing of it",
		"rayStartParams['labels'] is not supported for Head group", "generation 1, observed 0")
	wantContains(t, "remedy", f.Remedy, "kubectl edit raycluster inv -n "+h.NS)
	if got := d.rules("inv"); len(got) != 1 || res.Code != 1 {
		t.Errorf("findings %v (want spec-invalid alone, no head-missing), exit %d\n%s", got, res.Code, res)
	}

	patch := []byte(`[{"op":"remove","path":"/spec/headGroupSpec/rayStartParams/labels"}]`)
	if _, err := h.Ray.RayV1().RayClusters(h.NS).Patch(h.Ctx, "inv", types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitClusterRunning("inv", 90*time.Second)
	h.WaitFor("the operator's status of generation 2", 60*time.Second, func() (bool, error) {
		rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, "inv", metav1.GetOptions{})
		return err == nil && rc.Status.ObservedGeneration == rc.Generation, err
	})
	if d, res := h.doctorJSON("--operator-grace", "1s"); len(d.rules("inv")) != 0 {
		t.Fatalf("after the fix: %v\n%s", d.rules("inv"), res)
	}
}

// specRefused runs doctor -f on doc, written to a file, against the cluster of v: spec-refused
// finds it refused, as KubeRay v1.6.2's validation (the plugin's module) words it, and says what
// v's operator does. It returns the Event message doctor predicts.
func (h *H) specRefused(doc any, cluster string, v kubeRayVersion) string {
	h.T.Helper()
	file := manifestFile(h.T, cluster, doc)
	d, res := h.doctorJSON("-f", file)
	f := d.finding(h.T, cluster, "spec-refused")
	if res.Code != 1 || f.Evidence["validatedAs"] != "v1.6.2" || f.Evidence["operator"] != v.version {
		h.T.Errorf("doctor -f: exit %d, evidence %v\n%s", res.Code, f.Evidence, res)
	}
	note := map[string]string{"v1.1.1": "the operator here, v1.1.1, does not run this validation",
		"v1.5.0": "the operator here, v1.5.0, runs an older validation",
		"v1.7.0": "the operator here is v1.7.0, whose validation has these checks and more"}[v.version]
	if !strings.Contains(f.Message, f.Evidence["event"]) || note != "" && !strings.Contains(f.Message, note) ||
		note == "" && strings.Contains(f.Message, "the operator here") {
		h.T.Errorf("spec-refused on %s: %s", v.version, f.Message)
	}
	return f.Evidence["event"]
}

// warningMessages are the messages of the Warning Events of reason about object name.
func (h *H) warningMessages(name, reason string) []string {
	h.T.Helper()
	evs, err := h.Kube.CoreV1().Events(h.NS).List(h.Ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",type=Warning,reason=" + reason})
	if err != nil {
		h.T.Fatal(err)
	}
	var out []string
	for _, ev := range evs.Items {
		out = append(out, ev.Message)
	}
	return out
}
