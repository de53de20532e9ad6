package play

import (
	"net/http"
	"regexp"
	"sort"
)

// What the Ray stand-ins play of Ray's own view, as doctor --ray reads it (ray-project/ray,
// python/ray/dashboard: modules/healthz, the Jobs module's /api/version, the State API of
// modules/state/state_head.py with NodeState of ray/util/state/common.py, and serve_head.py).
const (
	// PlayDashboardStateAPI: the head's dashboard answers GET /api/gcs_healthz ("success"),
	// /api/version (the Ray version of the head's image tag), /api/v0/nodes (the State API's
	// envelope, a node per Running Ray pod of the cluster, its IP the pod's) and GET /api/jobs/
	// (the list of PlayJobsRun's jobs).
	PlayDashboardStateAPI = "dashboard: GCS health, version, node table and jobs list on the head"
	// PlayNodeTable: every Running Ray pod is an ALIVE node at its pod IP, unless the test marked
	// it DEAD (MarkDead: its raylet lost the GCS) or unknown (Forget: it never registered).
	PlayNodeTable = "node table: an ALIVE node per Running pod, unless marked DEAD or forgotten"
	// PlayAppsDeployFailed: an application FailApps names is DEPLOY_FAILED with the test's
	// message, its deployments UNHEALTHY.
	PlayAppsDeployFailed = "apps FailApps names are DEPLOY_FAILED with Ray's message"
	// PlayAutoscalerStatus: the dashboard answers /api/cluster_status as reporter_head.py
	// does: clusterStatus null without an autoscaler, else the test's Demands as the monitor's
	// loadMetricsReport.resourceDemand, with no pending launches.
	PlayAutoscalerStatus = "autoscaler status: the test's resource demands, or none"
	// PlayGCSDown: for a cluster GCSDown names, the dashboard answers the GCS health check 503,
	// as healthz_head.py does when the GCS is not alive.
	PlayGCSDown = "the GCS health check answers 503 for a cluster GCSDown names"
)

// Demand is one shape of resource request the autoscaler has waiting (PlayAutoscalerStatus).
type Demand struct {
	Resources map[string]float64
	Count     int
}

// MarkDead has Ray's node table say pod's node is DEAD (PlayNodeTable).
func (r *Ray) MarkDead(pod string) { r.mu.Lock(); r.nodeStates[pod] = "DEAD"; r.mu.Unlock() }

// Forget has Ray's node table not know pod at all (PlayNodeTable).
func (r *Ray) Forget(pod string) { r.mu.Lock(); r.nodeStates[pod] = ""; r.mu.Unlock() }

var tagVersion = regexp.MustCompile(`:(\d+\.\d+\.\d+)`)

// stateAPI serves PlayDashboardStateAPI's GETs for n's cluster; it reports whether it did.
func (r *Ray) stateAPI(n *rayNode, rw http.ResponseWriter, req *http.Request) bool {
	if req.Method != http.MethodGet {
		return false
	}
	switch req.URL.Path {
	case "/api/gcs_healthz":
		if r.opts.GCSDown != nil && r.opts.GCSDown(n.cluster) { // PlayGCSDown
			http.Error(rw, "503: Health check failed: GCS is not alive", http.StatusServiceUnavailable)
			return true
		}
		rw.Header().Set("Content-Type", "application/text")
		_, _ = rw.Write([]byte("success"))
	case "/api/version":
		version := "2.9.0"
		if m := tagVersion.FindStringSubmatch(n.image); m != nil {
			version = m[1]
		}
		writeJSON(rw, map[string]string{"version": "4", "ray_version": version, "ray_commit": "sandbox", "session_name": "session_sandbox"})
	case "/api/cluster_status": // PlayAutoscalerStatus
		var status any // null: no autoscaler
		if r.opts.Demands != nil {
			demands := []any{}
			for _, d := range r.opts.Demands(n.cluster) {
				demands = append(demands, []any{d.Resources, d.Count})
			}
			status = map[string]any{"loadMetricsReport": map[string]any{"resourceDemand": demands, "usage": map[string]any{}},
				"autoscalerReport": map[string]any{"pendingLaunches": map[string]int{}, "failedNodes": []any{}}}
		}
		writeJSON(rw, map[string]any{"result": true, "msg": "Got cluster status.", "data": map[string]any{
			"autoscalingStatus": nil, "autoscalingError": nil, "clusterStatus": status}})
	case "/api/v0/nodes":
		r.mu.Lock()
		var nodes []map[string]any
		var pods []string
		for pod, o := range r.nodes {
			if o.cluster == n.cluster && len(o.servers) > 0 {
				pods = append(pods, pod)
			}
		}
		sort.Strings(pods)
		for _, pod := range pods {
			o := r.nodes[pod]
			state, overridden := r.nodeStates[pod]
			if overridden && state == "" {
				continue // Forget
			}
			if !overridden {
				state = "ALIVE"
			}
			node := map[string]any{"node_id": nodeID(pod), "node_ip": o.ip, "is_head_node": o.head,
				"state": state, "state_message": nil, "node_name": o.ip, "resources_total": map[string]float64{"CPU": 1}, "labels": map[string]string{}}
			if state == "DEAD" {
				node["state_message"] = "Health check failed due to missing too many heartbeats"
			}
			nodes = append(nodes, node)
		}
		r.mu.Unlock()
		writeJSON(rw, map[string]any{"result": true, "msg": "", "data": map[string]any{"result": map[string]any{
			"total": len(nodes), "num_after_truncation": len(nodes), "num_filtered": len(nodes), "result": nodes,
			"partial_failure_warning": "", "warnings": nil}}})
	default:
		return false
	}
	return true
}

// Revive has Ray's node table say pod's node is ALIVE again (PlayNodeTable).
func (r *Ray) Revive(pod string) { r.mu.Lock(); delete(r.nodeStates, pod); r.mu.Unlock() }
