package play

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// rayWith is a Ray with one cluster whose head and worker stand-ins exist (no pod watch).
func rayWith(opts RayOptions) (*Ray, *rayNode, *rayNode) {
	r := &Ray{opts: opts, clusters: map[string]*rayCluster{}, nodes: map[string]*rayNode{}}
	r.clusters["rc"] = &rayCluster{head: "head-1", epoch: 1, apps: map[string]*serveApp{}}
	head := &rayNode{pod: "head-1", cluster: "rc", head: true, epoch: 1}
	worker := &rayNode{pod: "worker", cluster: "rc", epoch: 1}
	r.nodes["head-1"], r.nodes["worker"] = head, worker
	return r, head, worker
}

func get(t *testing.T, h func(http.ResponseWriter, *http.Request), method, path, body string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	return rec.Code, rec.Body.String()
}

const serveConfig = `{"applications":[{"name":"fruit_app","route_prefix":"/fruit","deployments":[{"name":"MangoStand"}]},{"name":"math_app","route_prefix":"/calc"}]}`

func TestRayStandInsPlay(t *testing.T) {
	r, head, worker := rayWith(RayOptions{DeployTime: 50 * time.Millisecond})
	proxy := func(n *rayNode) func(http.ResponseWriter, *http.Request) {
		return func(rw http.ResponseWriter, req *http.Request) { r.proxy(n, rw, req) }
	}
	dash := func(rw http.ResponseWriter, req *http.Request) { r.dashboard(head, rw, req) }

	// PlayProxyHealth: no Serve before the first deployment.
	if code, _ := get(t, proxy(head), "GET", "/-/healthz", ""); code != 503 {
		t.Errorf("healthz before any deployment: %d, want 503", code)
	}
	// PlayDashboardServeAPI, PlayAppsStartDeploying.
	if code, body := get(t, dash, "PUT", "/api/serve/applications/", serveConfig); code != 200 {
		t.Fatalf("PUT: %d %s", code, body)
	}
	var details struct {
		Applications map[string]struct {
			Status      string                    `json:"status"`
			RoutePrefix string                    `json:"route_prefix"`
			Deployments map[string]map[string]any `json:"deployments"`
		} `json:"applications"`
	}
	_, body := get(t, dash, "GET", "/api/serve/applications/?api_type=declarative", "")
	if err := json.Unmarshal([]byte(body), &details); err != nil || details.Applications["fruit_app"].Status != "DEPLOYING" ||
		details.Applications["fruit_app"].RoutePrefix != "/fruit" || details.Applications["fruit_app"].Deployments["MangoStand"] == nil {
		t.Errorf("GET right after PUT: %v %s", err, body)
	}
	if code, _ := get(t, proxy(worker), "GET", "/fruit", ""); code != 503 {
		t.Errorf("route of a DEPLOYING app: %d, want 503", code)
	}
	time.Sleep(60 * time.Millisecond)
	_, body = get(t, dash, "GET", "/api/serve/applications/?api_type=declarative", "")
	if !strings.Contains(body, `"status":"RUNNING"`) || strings.Contains(body, "DEPLOYING") {
		t.Errorf("after the deploy time: %s", body)
	}
	// PlayProxyRoutes.
	for path, want := range map[string]int{"/fruit": 200, "/fruit/mango": 200, "/calc": 200, "/nope": 404, "/-/healthz": 200} {
		if code, _ := get(t, proxy(worker), "GET", path, ""); code != want {
			t.Errorf("%s: %d, want %d", path, code, want)
		}
	}
	// PlayHeadRestartLosesApps, PlayProxyLostController: the head's deletion starts.
	r.headGone(head)
	c := r.clusters["rc"]
	if code, _ := get(t, proxy(worker), "GET", "/fruit", ""); code != 502 {
		t.Errorf("a worker's proxy after the head is gone: %d, want 502", code)
	}
	if code, _ := get(t, proxy(worker), "GET", "/-/healthz", ""); code != 503 {
		t.Errorf("healthz with no controller: %d, want 503", code)
	}
	// A new head, the apps submitted again: the worker serves again once they run.
	r.mu.Lock()
	c.newHead("head-2")
	newHead := &rayNode{pod: "head-2", cluster: "rc", head: true, epoch: c.epoch}
	r.mu.Unlock()
	if code, _ := get(t, proxy(worker), "GET", "/fruit", ""); code != 502 {
		t.Errorf("a worker's proxy before the apps reach the new head: %d, want 502", code)
	}
	if code, _ := get(t, func(rw http.ResponseWriter, req *http.Request) { r.dashboard(newHead, rw, req) }, "PUT", "/api/serve/applications/", serveConfig); code != 200 {
		t.Fatal("PUT to the new head")
	}
	time.Sleep(60 * time.Millisecond)
	if code, _ := get(t, proxy(worker), "GET", "/fruit", ""); code != 200 {
		t.Errorf("the worker after redeployment: %d, want 200", code)
	}
	// NeverRunning keeps a cluster's apps DEPLOYING.
	r.opts.NeverRunning = func(string) bool { return true }
	if code, _ := get(t, proxy(worker), "GET", "/fruit", ""); code != 503 {
		t.Errorf("NeverRunning: %d, want 503", code)
	}
	// Tally leaves out health checks unless asked.
	_, total := r.Tally(time.Time{}, false)
	_, withHealth := r.Tally(time.Time{}, true)
	if total["502"] != 2 || withHealth["503"] <= total["503"] {
		t.Errorf("tally %v, with health checks %v", total, withHealth)
	}
}
