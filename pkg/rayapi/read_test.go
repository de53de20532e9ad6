package rayapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// dashboard answers as Ray's does, with overrides by path.
func dashboard(t *testing.T, override map[string]func(http.ResponseWriter)) string {
	t.Helper()
	bodies := map[string]string{
		"/api/gcs_healthz":         "success",
		"/api/version":             `{"version":"4","ray_version":"2.9.0","ray_commit":"x"}`,
		"/api/v0/nodes":            `{"result":true,"msg":"","data":{"result":{"total":2,"num_after_truncation":2,"result":[{"node_id":"aa","node_ip":"10.0.0.1","is_head_node":true,"state":"ALIVE"},{"node_id":"bb","node_ip":"10.0.0.2","is_head_node":false,"state":"DEAD","state_message":"gone"}]}}}`,
		"/api/serve/applications/": `{"deploy_mode":"MULTI_APP","applications":{"b":{"name":"b","status":"DEPLOY_FAILED","message":"boom","last_deployed_time_s":1748768400.5,"deployments":{"D2":{"name":"D2","status":"UNHEALTHY","message":"m"},"D1":{"name":"D1","status":"HEALTHY","message":"","replicas":[{"replica_id":"r2","state":"STARTING","node_id":"bb","node_ip":"10.0.0.2","actor_name":"SERVE_REPLICA::b#D1#r2"},{"replica_id":"r1","state":"RUNNING","node_id":"aa","node_ip":"10.0.0.1"}]}}},"a":{"name":"a","status":"RUNNING","deployments":{}}}}`,
		"/api/jobs/":               `[{"type":"SUBMISSION","job_id":"02000000","submission_id":"nightly-x","status":"FAILED","message":"Job entrypoint command failed with exit code 1","error_type":"JOB_ENTRYPOINT_COMMAND_ERROR","end_time":1748768400000}]`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("%s %s: doctor only reads", r.Method, r.URL)
		}
		if f := override[r.URL.Path]; f != nil {
			f(w)
			return
		}
		if b, ok := bodies[r.URL.Path]; ok {
			_, _ = w.Write([]byte(b))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func read(t *testing.T, base string, timeout time.Duration) View {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var v View
	Read(ctx, http.DefaultClient, base, "", &v)
	return v
}

func TestReadHealthyDashboard(t *testing.T) {
	v := read(t, dashboard(t, nil), 5*time.Second)
	if v.Unreachable != nil || !v.GCSAlive || v.Version != "2.9.0" || len(v.Failed) != 0 {
		t.Fatalf("view %+v", v)
	}
	if !v.NodesRead || len(v.Nodes) != 2 || !v.Nodes[0].Alive() || v.Nodes[1].Alive() || v.Nodes[1].Detail != "gone" || v.Nodes[0].IP != "10.0.0.1" || !v.Nodes[0].Head {
		t.Fatalf("nodes %+v", v.Nodes)
	}
	if !v.AppsRead || len(v.Apps) != 2 || v.Apps[0].Name != "a" || v.Apps[1].Status != "DEPLOY_FAILED" || v.Apps[1].Deployments[0].Name != "D1" ||
		v.Apps[1].LastDeployed.Unix() != 1748768400 || len(v.Apps[1].Deployments[1].Replicas) != 0 ||
		fmt.Sprint(v.Apps[1].Deployments[0].Replicas) != "[{r1 RUNNING aa 10.0.0.1} {r2 STARTING bb 10.0.0.2}]" {
		t.Fatalf("apps %+v", v.Apps)
	}
	if !v.JobsRead || len(v.Jobs) != 1 || v.Jobs[0].SubmissionID != "nightly-x" || v.Jobs[0].Status != "FAILED" || v.Jobs[0].End.IsZero() {
		t.Fatalf("jobs %+v", v.Jobs)
	}
}

func TestReadGCSDownAsksNothingElseOfTheGCS(t *testing.T) {
	v := read(t, dashboard(t, map[string]func(http.ResponseWriter){
		"/api/gcs_healthz": func(w http.ResponseWriter) {
			http.Error(w, "503: Health check failed: GCS is not alive", http.StatusServiceUnavailable)
		},
	}), 5*time.Second)
	if v.Unreachable != nil || v.GCSAlive || !strings.Contains(v.GCSMessage, "GCS is not alive") || v.NodesRead || v.AppsRead || v.Version != "2.9.0" {
		t.Fatalf("view %+v", v)
	}
}

func TestReadUnreachable(t *testing.T) {
	v := read(t, dashboard(t, map[string]func(http.ResponseWriter){
		"/api/gcs_healthz": func(w http.ResponseWriter) { http.Error(w, "no", http.StatusForbidden) },
	}), 5*time.Second)
	if v.Unreachable == nil || v.Unreachable.Reason != HTTPError || !strings.Contains(v.Unreachable.Detail, "HTTP 403: no") {
		t.Fatalf("an HTTP error: %+v", v.Unreachable)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	base := srv.URL
	srv.Close()
	if v := read(t, base, 5*time.Second); v.Unreachable == nil || v.Unreachable.Reason != Unconnected {
		t.Fatalf("nothing listening: %+v", v.Unreachable)
	}
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
	defer slow.Close()
	defer close(hang)
	if v := read(t, slow.URL, 100*time.Millisecond); v.Unreachable == nil || v.Unreachable.Reason != Timeout {
		t.Fatalf("a hanging GCS check: %+v", v.Unreachable)
	}
}

// A read that fails while the others answer is listed, and what it would show is not claimed;
// Ray without Serve (501) has no applications, which is no failure.
func TestReadPartialFailures(t *testing.T) {
	v := read(t, dashboard(t, map[string]func(http.ResponseWriter){
		"/api/v0/nodes":            func(w http.ResponseWriter) { http.Error(w, "GCS unavailable", http.StatusInternalServerError) },
		"/api/serve/applications/": func(w http.ResponseWriter) { http.Error(w, "Serve is not installed", http.StatusNotImplemented) },
		"/api/jobs/":               func(w http.ResponseWriter) { _, _ = w.Write([]byte("<html>")) },
	}), 5*time.Second)
	if v.NodesRead || !v.AppsRead || len(v.Apps) != 0 || v.JobsRead || len(v.Failed) != 2 ||
		!strings.Contains(v.Failed[0], "GET /api/v0/nodes") || !strings.Contains(v.Failed[0], "HTTP 500: GCS unavailable") || !strings.Contains(v.Failed[1], "/api/jobs/") {
		t.Fatalf("view %+v", v)
	}
}

func TestDecodeNodesRefusesAFailedStateAPI(t *testing.T) {
	if _, err := DecodeNodes([]byte(`{"result":false,"msg":"Failed to get nodes","data":{"result":null}}`)); err == nil || !strings.Contains(err.Error(), "Failed to get nodes") {
		t.Fatalf("err %v", err)
	}
}
