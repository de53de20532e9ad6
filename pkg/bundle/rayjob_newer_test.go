package bundle

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// A field of a newer release's RayJob that the API types drop (KubeRay v1.7.0's
// status.jobStatusCheckFailureStartTime) is written into the RayJob's file, and doctor --from
// reads it back.
func TestBundleKeepsNewerRayJobFields(t *testing.T) {
	s := scene()
	since := metav1.NewTime(time.Date(2025, 6, 1, 11, 57, 0, 0, time.UTC))
	s.JobsNewer = map[string]ray.RayJobNewer{"ml/job": {JobStatusCheckFailureStartTime: &since}}
	c := Render(s, MakePlan(s, nil, PlanOptions{}), Collected{}, nil)
	var file []byte
	for _, f := range c.Files {
		if f.Path == "namespaces/ml/rayjobs/job.json" {
			file = f.Data
		}
	}
	if !strings.Contains(string(file), `"jobStatusCheckFailureStartTime": "2025-06-01T11:57:00Z"`) {
		t.Fatalf("the RayJob's file lacks the field:\n%s", file)
	}
	back := &state.Snapshot{}
	if err := addFile(back, "namespaces/ml/rayjobs/job.json", file); err != nil {
		t.Fatal(err)
	}
	got := back.JobsNewer["ml/job"].JobStatusCheckFailureStartTime
	if len(back.Jobs) != 1 || got == nil || !got.Equal(&since) {
		t.Errorf("read back: %d RayJobs, newer fields %+v", len(back.Jobs), back.JobsNewer)
	}

	// Without it, the file is the typed object's, and nothing is read back.
	s.JobsNewer = nil
	c = Render(s, MakePlan(s, nil, PlanOptions{}), Collected{}, nil)
	for _, f := range c.Files {
		if f.Path == "namespaces/ml/rayjobs/job.json" {
			back := &state.Snapshot{}
			if err := addFile(back, f.Path, f.Data); err != nil || len(back.JobsNewer) != 0 || strings.Contains(string(f.Data), "jobStatusCheckFailureStartTime") {
				t.Errorf("a RayJob without newer fields: %v %v\n%s", err, back.JobsNewer, f.Data)
			}
		}
	}
}
