package play

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// jobInfo is what KubeRay's dashboardclient reads of GET /api/jobs/{id} (utiltypes.RayJobInfo).
type jobInfo struct {
	Status       string `json:"status"`
	Message      string `json:"message"`
	SubmissionID string `json:"submission_id"`
	StartTime    uint64 `json:"start_time"`
	EndTime      uint64 `json:"end_time"`
}

func TestRayStandInJobsAPI(t *testing.T) {
	r, head, _ := rayWith(RayOptions{JobRunTime: 50 * time.Millisecond, FailJobs: func(c string) bool { return c == "bad" }})
	bad, badHead, _ := rayWith(RayOptions{JobRunTime: time.Millisecond, FailJobs: func(c string) bool { return c == "rc" }})
	d := func(rw http.ResponseWriter, req *http.Request) { r.dashboard(head, rw, req) }
	// PlayDashboardJobsAPI: unknown id is a 404, which KubeRay reads as "not submitted yet".
	if code, body := get(t, d, "GET", "/api/jobs/etl-x7k2p", ""); code != 404 || !strings.Contains(body, "Job etl-x7k2p does not exist") {
		t.Errorf("GET of an unknown job: %d %s", code, body)
	}
	if code, body := get(t, d, "POST", "/api/jobs/", `{"entrypoint":"python -c 'print(1)'","submission_id":"etl-x7k2p"}`); code != 200 ||
		!strings.Contains(body, `"submission_id":"etl-x7k2p"`) || !strings.Contains(body, `"job_id":"etl-x7k2p"`) {
		t.Fatalf("POST: %d %s", code, body)
	}
	if code, body := get(t, d, "POST", "/api/jobs/", `{"entrypoint":"x","submission_id":"etl-x7k2p"}`); code != 500 || !strings.Contains(body, "Please use a different submission_id") {
		t.Errorf("POST of a used submission_id: %d %s", code, body)
	}
	var info jobInfo
	_, body := get(t, d, "GET", "/api/jobs/etl-x7k2p", "")
	if err := json.Unmarshal([]byte(body), &info); err != nil || info.Status != "RUNNING" || info.StartTime == 0 || info.EndTime != 0 {
		t.Errorf("a job just submitted: %v %s", err, body)
	}
	// PlayJobsRun: it ends after the run time.
	time.Sleep(60 * time.Millisecond)
	_, body = get(t, d, "GET", "/api/jobs/etl-x7k2p", "")
	if err := json.Unmarshal([]byte(body), &info); err != nil || info.Status != "SUCCEEDED" || info.EndTime == 0 || info.Message != "Job finished successfully." {
		t.Errorf("a job past its run time: %v %s", err, body)
	}
	// FailJobs: the cluster's jobs end FAILED, with the entrypoint's exit.
	db := func(rw http.ResponseWriter, req *http.Request) { bad.dashboard(badHead, rw, req) }
	get(t, db, "POST", "/api/jobs/", `{"entrypoint":"python fail.py","submission_id":"f-1"}`)
	time.Sleep(5 * time.Millisecond)
	_, body = get(t, db, "GET", "/api/jobs/f-1", "")
	if err := json.Unmarshal([]byte(body), &info); err != nil || info.Status != "FAILED" || !strings.Contains(info.Message, "failed with exit code 1") {
		t.Errorf("a job of a FailJobs cluster: %v %s", err, body)
	}
	// A new head (a new GCS) has no jobs.
	r.clusters["rc"].newHead("head-2")
	if code, _ := get(t, d, "GET", "/api/jobs/etl-x7k2p", ""); code != 404 {
		t.Errorf("GET after a new head: %d, want 404", code)
	}
}
