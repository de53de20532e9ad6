package rayapi

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"
)

// DecodeVersion reads /api/version: {"version": ..., "ray_version": "2.9.0", "ray_commit": ...}.
func DecodeVersion(b []byte) (string, error) {
	var v struct {
		RayVersion string `json:"ray_version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return "", fmt.Errorf("not the dashboard's version JSON: %v", err)
	}
	return v.RayVersion, nil
}

// DecodeNodes reads the State API's list of nodes (/api/v0/nodes): {"result": true, "msg": "",
// "data": {"result": {"total": N, "result": [NodeState...]}}}, NodeState as in
// ray/util/state/common.py.
func DecodeNodes(b []byte) ([]Node, error) {
	var env struct {
		Result *bool  `json:"result"`
		Msg    string `json:"msg"`
		Data   struct {
			Result struct {
				Result []struct {
					NodeID       string `json:"node_id"`
					NodeIP       string `json:"node_ip"`
					IsHeadNode   bool   `json:"is_head_node"`
					State        string `json:"state"`
					StateMessage string `json:"state_message"`
					NodeName     string `json:"node_name"`
				} `json:"result"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("not the State API's JSON: %v", err)
	}
	if env.Result == nil || !*env.Result {
		return nil, fmt.Errorf("the State API failed: %s", env.Msg)
	}
	out := make([]Node, 0, len(env.Data.Result.Result))
	for _, n := range env.Data.Result.Result {
		out = append(out, Node{ID: n.NodeID, IP: n.NodeIP, Head: n.IsHeadNode, State: n.State, Detail: n.StateMessage, Name: n.NodeName})
	}
	return out, nil
}

// DecodeApps reads Serve's instance details (/api/serve/applications/): {"applications": {name:
// {"status", "message", "last_deployed_time_s", "deployments": {name: {"status", "message",
// "replicas": [{"replica_id", "state", "node_id", "node_ip"}]}}}}} (python/ray/serve/schema.py:
// ServeInstanceDetails, ReplicaDetails). Applications and deployments come sorted by name,
// replicas by ID.
func DecodeApps(b []byte) ([]App, error) {
	var d struct {
		Applications map[string]struct {
			Name         string  `json:"name"`
			Status       string  `json:"status"`
			Message      string  `json:"message"`
			LastDeployed float64 `json:"last_deployed_time_s"`
			Deployments  map[string]struct {
				Name     string `json:"name"`
				Status   string `json:"status"`
				Message  string `json:"message"`
				Replicas []struct {
					ID     string `json:"replica_id"`
					State  string `json:"state"`
					NodeID string `json:"node_id"`
					NodeIP string `json:"node_ip"`
				} `json:"replicas"`
			} `json:"deployments"`
		} `json:"applications"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("not Serve's JSON: %v", err)
	}
	out := make([]App, 0, len(d.Applications))
	for name, a := range d.Applications {
		app := App{Name: name, Status: a.Status, Message: a.Message, LastDeployed: seconds(a.LastDeployed)}
		for dn, dep := range a.Deployments {
			d := Deployment{Name: dn, Status: dep.Status, Message: dep.Message}
			for _, r := range dep.Replicas {
				d.Replicas = append(d.Replicas, Replica{ID: r.ID, State: r.State, NodeID: r.NodeID, NodeIP: r.NodeIP})
			}
			sort.Slice(d.Replicas, func(i, j int) bool { return d.Replicas[i].ID < d.Replicas[j].ID })
			app.Deployments = append(app.Deployments, d)
		}
		sort.Slice(app.Deployments, func(i, j int) bool { return app.Deployments[i].Name < app.Deployments[j].Name })
		out = append(out, app)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// DecodeJobs reads the Jobs API's list (/api/jobs/): a JSON list of JobDetails.
func DecodeJobs(b []byte) ([]Job, error) {
	var js []struct {
		JobID        *string `json:"job_id"`
		SubmissionID *string `json:"submission_id"`
		Status       string  `json:"status"`
		Message      *string `json:"message"`
		ErrorType    *string `json:"error_type"`
		EndTime      *int64  `json:"end_time"`
	}
	if err := json.Unmarshal(b, &js); err != nil {
		return nil, fmt.Errorf("not the Jobs API's JSON: %v", err)
	}
	out := make([]Job, 0, len(js))
	for _, j := range js {
		job := Job{JobID: deref(j.JobID), SubmissionID: deref(j.SubmissionID), Status: j.Status, Message: deref(j.Message), ErrorType: deref(j.ErrorType)}
		if j.EndTime != nil && *j.EndTime > 0 {
			job.End = time.UnixMilli(*j.EndTime).UTC()
		}
		out = append(out, job)
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func seconds(s float64) time.Time {
	if s <= 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return time.Time{}
	}
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC()
}

// DecodeClusterStatus reads the autoscaler's status (/api/cluster_status, format 0): {"result":
// true, "data": {"clusterStatus": {"loadMetricsReport": {"resourceDemand": [[{"CPU": 8}, 2],
// ...]}, "autoscalerReport": {"pendingLaunches": {"type": n}}}}}. ok is false when no autoscaler
// reported (clusterStatus null). The dashboard camelCases the keys of dicts (node type names in
// pendingLaunches among them), not the resource names inside resourceDemand's lists.
func DecodeClusterStatus(b []byte) (demands []Demand, pending map[string]int, ok bool, err error) {
	var env struct {
		Result *bool  `json:"result"`
		Msg    string `json:"msg"`
		Data   struct {
			ClusterStatus *struct {
				LoadMetricsReport struct {
					ResourceDemand [][]json.RawMessage `json:"resourceDemand"`
				} `json:"loadMetricsReport"`
				AutoscalerReport struct {
					PendingLaunches map[string]int `json:"pendingLaunches"`
				} `json:"autoscalerReport"`
			} `json:"clusterStatus"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, nil, false, fmt.Errorf("not the autoscaler status JSON: %v", err)
	}
	if env.Result == nil || !*env.Result {
		return nil, nil, false, fmt.Errorf("the cluster status failed: %s", env.Msg)
	}
	cs := env.Data.ClusterStatus
	if cs == nil {
		return nil, nil, false, nil
	}
	for _, d := range cs.LoadMetricsReport.ResourceDemand {
		if len(d) != 2 {
			continue
		}
		var res map[string]float64
		var n int
		if json.Unmarshal(d[0], &res) != nil || json.Unmarshal(d[1], &n) != nil || len(res) == 0 {
			continue
		}
		demands = append(demands, Demand{Resources: res, Count: n})
	}
	return demands, cs.AutoscalerReport.PendingLaunches, true, nil
}
