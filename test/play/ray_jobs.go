package play

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// What the Ray stand-ins play of Ray's Jobs API (python/ray/dashboard/modules/job/job_head.py and
// pydantic_models.py, ray-project/ray at 017deaf; KubeRay's dashboardclient reads the same
// fields: status, message, start_time, end_time).
const (
	// PlayDashboardJobsAPI: the head's dashboard answers POST /api/jobs/ (the job's
	// submission_id back as job_id and submission_id; 500 "Please use a different submission_id"
	// for one already used) and GET /api/jobs/{id} (the job's details; 404 "Job X does not
	// exist"), as KubeRay submits a RayJob in HTTPMode and reads every RayJob's status.
	PlayDashboardJobsAPI = "dashboard: POST /api/jobs/ and GET /api/jobs/{id} on the head"
	// PlayJobsRun: a submitted job is RUNNING, then SUCCEEDED after JobRunTime (FAILED, with
	// exit code 1, for a cluster FailJobs names); a new head has none (the job table lives in the
	// GCS, like the Serve applications of PlayHeadRestartLosesApps).
	PlayJobsRun = "Ray jobs RUNNING, then SUCCEEDED after the run time (or FAILED)"
)

// rayJobRun is one submitted Ray job in a stand-in GCS.
type rayJobRun struct {
	id, entrypoint string
	metadata       map[string]string
	submitted      time.Time
}

// jobsAPI serves /api/jobs/... for cluster. Called without r.mu held.
func (r *Ray) jobsAPI(cluster string, rw http.ResponseWriter, req *http.Request) {
	id := strings.TrimPrefix(req.URL.Path, "/api/jobs/")
	switch {
	case req.Method == http.MethodPost && id == "":
		var body struct {
			Entrypoint   string            `json:"entrypoint"`
			SubmissionID string            `json:"submission_id"`
			Metadata     map[string]string `json:"metadata"`
		}
		b, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		if err := json.Unmarshal(b, &body); err != nil || body.Entrypoint == "" {
			http.Error(rw, "bad job submission: an entrypoint is required", http.StatusBadRequest)
			return
		}
		if body.SubmissionID == "" {
			body.SubmissionID = fmt.Sprintf("raysubmit_%d", time.Now().UnixNano())
		}
		r.mu.Lock()
		c := r.clusters[cluster]
		if c.jobs == nil {
			c.jobs = map[string]*rayJobRun{}
		}
		if c.jobs[body.SubmissionID] != nil {
			r.mu.Unlock()
			http.Error(rw, "Job with submission_id "+body.SubmissionID+" already exists. Please use a different submission_id.", http.StatusInternalServerError)
			return
		}
		c.jobs[body.SubmissionID] = &rayJobRun{id: body.SubmissionID, entrypoint: body.Entrypoint, metadata: body.Metadata, submitted: time.Now()}
		r.mu.Unlock()
		r.logf("ray stand-ins: Ray job %s submitted to %s", body.SubmissionID, cluster)
		writeJSON(rw, map[string]string{"job_id": body.SubmissionID, "submission_id": body.SubmissionID})
	case req.Method == http.MethodGet && id == "": // PlayDashboardStateAPI: the list
		r.mu.Lock()
		out := []map[string]any{}
		for _, j := range r.clusters[cluster].jobs {
			out = append(out, r.jobDetails(cluster, j, time.Now()))
		}
		r.mu.Unlock()
		writeJSON(rw, out)
	case req.Method == http.MethodGet && id != "" && !strings.Contains(id, "/"):
		r.mu.Lock()
		var out map[string]any
		if j := r.clusters[cluster].jobs[id]; j != nil {
			out = r.jobDetails(cluster, j, time.Now())
		}
		r.mu.Unlock()
		if out == nil {
			http.Error(rw, "Job "+id+" does not exist", http.StatusNotFound)
			return
		}
		writeJSON(rw, out)
	default:
		http.Error(rw, "not played by the sandbox's Ray stand-in", http.StatusNotFound)
	}
}

// jobDetails is PlayJobsRun in the shape of Ray's JobDetails. Called with r.mu held.
func (r *Ray) jobDetails(cluster string, j *rayJobRun, now time.Time) map[string]any {
	ms := func(t time.Time) int64 { return t.UnixMilli() }
	d := map[string]any{"type": "SUBMISSION", "job_id": nil, "submission_id": j.id, "entrypoint": j.entrypoint,
		"status": "RUNNING", "message": "Job is currently running.", "error_type": nil,
		"start_time": ms(j.submitted), "end_time": nil, "metadata": j.metadata, "runtime_env": map[string]any{},
		"driver_exit_code": nil}
	if r.opts.JobRunTime <= 0 || now.Sub(j.submitted) < r.opts.JobRunTime {
		return d
	}
	d["end_time"] = ms(j.submitted.Add(r.opts.JobRunTime))
	if r.opts.FailJobs != nil && r.opts.FailJobs(cluster) {
		d["status"], d["driver_exit_code"], d["error_type"] = "FAILED", 1, "JOB_ENTRYPOINT_COMMAND_ERROR"
		d["message"] = "Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 chars):\nValueError: played by the sandbox's Ray stand-in"
		return d
	}
	d["status"], d["message"], d["driver_exit_code"] = "SUCCEEDED", "Job finished successfully.", 0
	return d
}

func writeJSON(rw http.ResponseWriter, v any) {
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(v)
}
