package ray

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RayJobNewer holds the fields of a RayJob that KubeRay releases newer than this plugin's API
// types (v1.6.2) write and those types drop, read beside the typed object.
type RayJobNewer struct {
	// JobStatusCheckFailureStartTime (v1.7.0, status.jobStatusCheckFailureStartTime): when the
	// operator's reads of the Ray job's status from the dashboard began failing; cleared by the
	// next read that succeeds (rayjob_controller.go recordJobStatusCheckFailure). Past
	// RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS the operator fails the RayJob with reason
	// JobStatusCheckTimeoutExceeded and never retries it.
	JobStatusCheckFailureStartTime *metav1.Time
}

// IsZero says whether n holds nothing.
func (n RayJobNewer) IsZero() bool { return n.JobStatusCheckFailureStartTime == nil }

// rayJobNewerDoc is where RayJobNewer's fields are in a RayJob's JSON.
type rayJobNewerDoc struct {
	Status struct {
		JobStatusCheckFailureStartTime *metav1.Time `json:"jobStatusCheckFailureStartTime,omitempty"`
	} `json:"status"`
}

func (d rayJobNewerDoc) newer() RayJobNewer {
	return RayJobNewer{JobStatusCheckFailureStartTime: d.Status.JobStatusCheckFailureStartTime}
}

// RayJobNewerOf is the RayJobNewer of one RayJob's JSON.
func RayJobNewerOf(obj []byte) (RayJobNewer, error) {
	var d rayJobNewerDoc
	err := json.Unmarshal(obj, &d)
	return d.newer(), err
}

// MergeRayJobNewer writes n's fields into m, a RayJob as the map of its JSON, where the API
// writes them: what a bundle keeps of the RayJob then holds them too.
func MergeRayJobNewer(m map[string]any, n RayJobNewer) {
	if n.JobStatusCheckFailureStartTime == nil {
		return
	}
	st, _ := m["status"].(map[string]any)
	if st == nil {
		st = map[string]any{}
		m["status"] = st
	}
	st["jobStatusCheckFailureStartTime"] = n.JobStatusCheckFailureStartTime.UTC().Format("2006-01-02T15:04:05Z")
}
