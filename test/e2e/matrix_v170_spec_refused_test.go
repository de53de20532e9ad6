package e2e

import (
	"encoding/json"
	"path/filepath"
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
	history, historyPath := h.operatorSample(v.version, "ray-cluster.historyserver.yaml")
	samplesAgainstOperator(h, filepath.Dir(historyPath))
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

// samplesAgainstOperator runs doctor -f on every sample of KubeRay v1.7.0 against its real
// operator: no error but the true predictions (spec-refused of the history server's sample: the
// sandbox's operator leaves RayClusterHistoryServer off, and this case has it refuse the sample),
// and no spec-refused of another sample (the sandbox turns on the other alpha gates they need).
func samplesAgainstOperator(h *H, dir string) {
	t := h.T
	res := h.Run("doctor", "-f", dir, "-R", "-n", h.NS, "-o", "json", "--fail-on", "never")
	if res.Code != 0 {
		t.Fatalf("doctor -f on KubeRay v1.7.0's samples against its operator: %s", res)
	}
	var d struct {
		Findings []struct {
			Rule, Severity, Message string
			Source                  struct{ File string }
		}
	}
	if err := json.Unmarshal([]byte(res.Stdout), &d); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, f := range d.Findings {
		file := filepath.Base(f.Source.File)
		switch {
		case f.Rule == "spec-refused" && file == "ray-cluster.historyserver.yaml":
			refused++
		case f.Rule == "head-fits-no-node" && (strings.Contains(f.Message, "node(s) didn't match Pod's node affinity/selector") || strings.Contains(f.Message, "Insufficient nvidia.com/gpu")):
		case f.Severity == "error" || f.Rule == "spec-refused":
			t.Errorf("%s: %s %s on KubeRay v1.7.0's sample against its operator: %s", file, f.Severity, f.Rule, f.Message)
		}
	}
	if refused != 1 {
		t.Errorf("doctor -f on KubeRay v1.7.0's samples: want the history server's refused once, got %d\n%s", refused, res.Stdout)
	}
}
