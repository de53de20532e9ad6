package e2e

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// spec-refused-v17: doctor -f against the real KubeRay v1.7.0 predicts its refusal of fields the
// plugin's API types (v1.6.2) drop: v1.7.0's own historyserver sample, whose
// historyServerOptions need the RayClusterHistoryServer gate (alpha, off by default; the
// sandbox's operator does not turn it on), and a cluster whose worker group sets a priority with
// a Ray older than 2.56.0. Both are then applied: the operator's Warning Events must say word for
// word what doctor -f predicted, and live doctor's spec-invalid quotes them. About 3 s.
func matrixSpecRefusedV17(t *testing.T, h *H, v kubeRayVersion) {
	history, _ := h.operatorSample(v.version, "ray-cluster.historyserver.yaml")
	history["metadata"] = map[string]any{"name": "history", "namespace": h.NS}
	prio := objectMap(t, "RayCluster", h.sampleCluster("prio"))
	spec := prio["spec"].(map[string]any)
	spec["rayVersion"] = "2.52.0"
	spec["workerGroupSpecs"].([]any)[0].(map[string]any)["priority"] = 10 // the plugin's API types predate it
	file := manifestFile(t, "gated", history, prio)

	fd, res := h.doctorJSON("-f", file)
	predicted := map[string]string{}
	for name, want := range map[string]string{
		"history": "RayClusterHistoryServer feature gate is not enabled",
		"prio":    "worker group small-group: priority is set, but minimum Ray version is 2.56.0, got 2.52.0",
	} {
		f := fd.finding(t, name, "spec-refused")
		wantContains(t, "doctor -f on "+name, f.Message, want, "KubeRay v1.7.0's own validation")
		if f.Evidence["validatedAs"] != "v1.7.0" || f.Severity != "error" {
			t.Errorf("doctor -f on %s: want an error validated as v1.7.0; got %+v", name, f)
		}
		predicted[name] = f.Evidence["event"]
	}
	if res.Code != 1 {
		t.Errorf("doctor -f: want exit 1\n%s", res)
	}

	// The operator's own words.
	h.createJSON(mustJSON(t, history))
	h.createJSON(mustJSON(t, prio))
	for name, event := range predicted {
		h.WaitFor("the operator to refuse "+name, 60*time.Second, func() (bool, error) {
			l, err := h.Kube.CoreV1().Events(h.NS).List(h.Ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=InvalidRayClusterSpec"})
			if err != nil || len(l.Items) == 0 {
				return false, err
			}
			if got := l.Items[0].Message; got != event {
				t.Errorf("%s: doctor -f predicted the Event\n  %q\nthe operator recorded\n  %q", name, event, got)
			}
			return true, nil
		})
	}
	d, res := h.doctorJSON("--operator-grace", "1s")
	f := d.finding(t, "history", "spec-invalid")
	wantContains(t, "live spec-invalid's remedy", f.Remedy, "add --feature-gates=RayClusterHistoryServer=true")
	if f := d.finding(t, "prio", "spec-invalid"); !strings.Contains(f.Message, "minimum Ray version is 2.56.0") || res.Code != 1 {
		t.Errorf("live doctor: want spec-invalid on prio quoting the operator, exit 1; got %+v\n%s", f, res)
	}
}
