package e2e

import (
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// rayRules are the rules about Ray's own view (scope "ray" in diagnose's catalog).
var rayRules = map[string]bool{"ray-dashboard-unreachable": true, "ray-gcs-unhealthy": true, "ray-node-dead": true,
	"ray-pod-unregistered": true, "ray-version-mismatch": true, "serve-app-failed": true, "serve-app-deploying": true,
	"ray-job-failed": true, "ray-demand-infeasible": true}

// rayFindings are d's findings about Ray's view, as "rule: message".
func rayFindings(d drDoc) []drFinding {
	var out []drFinding
	for _, f := range d.Findings {
		if rayRules[f.Rule] {
			out = append(out, f)
		}
	}
	return out
}

// TestDoctorRayLive: doctor reads Ray's own view through port-forwards via the API server to the
// head's dashboard, on KubeRay v1.1.1, v1.5.0 and v1.6.0 with the real RayService controller. Ray is
// played by the stand-ins (PlayDashboardServeAPI, PlayAppsStartDeploying, PlayDashboardStateAPI,
// PlayNodeTable, PlayAppsDeployFailed, PlayGCSDown, PlayAutoscalerStatus; docs/sandbox.md), which kwok's PortForward objects put
// behind the pods' ports: a healthy RayService is silent; a worker Ray marked DEAD, a worker Ray
// never saw, a Serve app DEPLOY_FAILED or DEPLOYING too long while every pod is Ready, the GCS
// down, GPU requests no group offers and a worker group on another Ray version each fire their
// rule; a user
// without pods/portforward and a head with no dashboard each get one finding saying why; a
// RayJob's Ray job that failed in Ray is reported with Ray's error type.
func TestDoctorRayLive(t *testing.T) {
	t.Parallel()
	for _, v := range liveSandboxes {
		t.Run(strings.ReplaceAll(v.version, ".", ""), func(t *testing.T) {
			t.Parallel()
			sb := v.sb(t)
			testDoctorRay(t, newHOn(t, sb), v.version)
			testDoctorRayNoDashboard(t, newHOn(t, sb))
		})
	}
}

func testDoctorRay(t *testing.T, h *H, version string) {
	var failApp, deploying, gcsDown, gpuWanted atomic.Bool
	ray := startRay(h, play.RayOptions{DeployTime: time.Second, FailApps: func(_, app string) (string, bool) {
		return "Deploying app 'fruit_app' failed with exception:\nModuleNotFoundError: No module named 'fruit'", failApp.Load() && app == "fruit_app"
	}, JobRunTime: 3 * time.Second, FailJobs: func(cluster string) bool { return strings.HasPrefix(cluster, "fails") },
		NeverRunning: func(string) bool { return deploying.Load() }, GCSDown: func(string) bool { return gcsDown.Load() },
		Demands: func(string) []play.Demand {
			if !gpuWanted.Load() {
				return nil
			}
			return []play.Demand{{Resources: map[string]float64{"CPU": 1}, Count: 2}, {Resources: map[string]float64{"GPU": 1}, Count: 3}}
		}})
	cluster := h.createLiveRayService("rs", version, func(rs *rayv1.RayService) {
		rs.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0"}
	})
	workers := h.Pods(cluster, "worker")
	if len(workers) == 0 {
		t.Fatalf("RayCluster %s has no worker", cluster)
	}
	worker := workers[0].Name

	// Healthy, named: Ray is asked without --ray, and says nothing is wrong.
	d, res := h.doctorJSON("rayservice/rs")
	if fs := rayFindings(d); len(fs) != 0 || len(d.Clusters) != 1 {
		t.Errorf("healthy RayService: Ray findings %+v\n%s", fs, res)
	}
	if c := d.Clusters[0].Ray; c == nil || !c.Read || !c.GCSAlive || c.AliveNodes != 1+len(workers) || c.DeadNodes != 0 || c.Apps["RUNNING"] != 2 {
		t.Errorf("Ray's view in the report: %+v (want read, GCS alive, %d alive nodes, 2 apps RUNNING)", c, 1+len(workers))
	}
	// Through kubectl's plugin discovery, --ray on the namespace: the same.
	kj := h.Kubectl("ray", "doctor", "--ray", "-n", h.NS, "-o", "json", "--fail-on", "never")
	if kj.Code != 0 || strings.Contains(kj.Stdout, `"rule": "ray-`) || strings.Contains(kj.Stdout, `"rule": "serve-app-`) || !strings.Contains(kj.Stdout, `"read": true`) {
		t.Errorf("kubectl ray doctor --ray:\n%s", kj)
	}

	// A worker Ray marked DEAD while its pod runs (PlayNodeTable).
	ray.MarkDead(worker)
	d, _ = h.doctorJSON("rayservice/rs")
	f := d.finding(t, cluster, "ray-node-dead")
	wantContains(t, "message", f.Message, "Ray has marked the node(s) of 1 Running pod(s) DEAD: "+worker, "missing too many heartbeats")
	if f.Evidence["pods"] != worker || f.Severity != "warning" {
		t.Errorf("ray-node-dead: %+v", f)
	}

	// A worker Ray never saw (PlayNodeTable), Ready for longer than --ray-register-grace.
	ray.Forget(worker)
	d, _ = h.doctorJSON("rayservice/rs", "--ray-register-grace", "1s")
	f = d.finding(t, cluster, "ray-pod-unregistered")
	wantContains(t, "message", f.Message, "are not in Ray's node table", worker)
	ray.Revive(worker)

	// The Serve application fails to deploy while every pod is Ready (PlayAppsDeployFailed).
	failApp.Store(true)
	d, res = h.doctorJSON("rayservice/rs")
	failApp.Store(false)
	f = d.finding(t, cluster, "serve-app-failed")
	wantContains(t, "message", f.Message, "Serve application fruit_app is DEPLOY_FAILED: Deploying app 'fruit_app' failed with exception:", "deployments: ")
	if f.Severity != "error" || res.Code != 1 {
		t.Errorf("serve-app-failed: severity %s, exit %d (want error, 1)", f.Severity, res.Code)
	}

	// The applications stay DEPLOYING (PlayAppsStartDeploying's NeverRunning) past
	// --serve-deploying-too-long.
	deploying.Store(true)
	d, _ = h.doctorJSON("rayservice/rs", "--serve-deploying-too-long", "1s")
	deploying.Store(false)
	var deployingApps []string
	for _, f := range d.Findings {
		if f.Rule == "serve-app-deploying" {
			deployingApps = append(deployingApps, f.Evidence["app"])
			wantContains(t, "message", f.Message, "is DEPLOYING for", "since it was last deployed")
		}
	}
	sort.Strings(deployingApps)
	if strings.Join(deployingApps, ",") != "fruit_app,math_app" {
		t.Errorf("serve-app-deploying for apps %v, want one for each of the sample's fruit_app and math_app", deployingApps)
	}

	// The GCS is down while the head pod is Running and Ready (PlayGCSDown): an error, and
	// nothing else is asked of the GCS.
	gcsDown.Store(true)
	d, res = h.doctorJSON("rayservice/rs")
	gcsDown.Store(false)
	f = d.finding(t, cluster, "ray-gcs-unhealthy")
	wantContains(t, "message", f.Message, "Ray's GCS is not alive", "GCS is not alive")
	if res.Code != 1 || len(rayFindings(d)) != 1 {
		t.Errorf("GCS down: exit %d, Ray findings %+v (want 1 and only ray-gcs-unhealthy)", res.Code, rayFindings(d))
	}

	// The autoscaler waits for GPUs no group offers (PlayAutoscalerStatus): the sample's groups
	// declare no num-gpus and no nvidia.com/gpu limit; the CPU requests may fit.
	gpuWanted.Store(true)
	d, _ = h.doctorJSON("rayservice/rs")
	gpuWanted.Store(false)
	f = d.finding(t, cluster, "ray-demand-infeasible")
	wantContains(t, "message", f.Message, "Ray's autoscaler has 3 request(s) waiting that no group can ever provide: 3 × {GPU: 1}")

	// A worker group on another Ray version than the head (their images' tags): the stand-in
	// head reports the version of its own image (PlayDashboardStateAPI).
	h.CreateRayCluster("mixed", func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = "rayproject/ray:2.10.0"
	})
	h.WaitClusterRunning("mixed", 90*time.Second)
	h.WaitFor("Ray's view of mixed", 30*time.Second, func() (bool, error) {
		d, _ = h.doctorJSON("mixed")
		return len(d.Clusters) == 1 && d.Clusters[0].Ray != nil && d.Clusters[0].Ray.Read, nil
	})
	f = d.finding(t, "mixed", "ray-version-mismatch")
	wantContains(t, "message", f.Message, "the head runs Ray 2.9.0", "(rayproject/ray:2.10.0)")

	// A RayJob whose Ray job fails in Ray (PlayJobsRun, FailJobs; HTTPMode, so the operator
	// submits it through the stand-in's Jobs API itself): Ray's error type and message.
	h.createRayJob("fails", func(j *rayv1.RayJob) { j.Spec.SubmissionMode = rayv1.HTTPMode })
	st := h.waitRayJob("fails", "its Ray job FAILED", 120*time.Second, func(s rayv1.RayJobStatus) bool { return s.JobStatus == rayv1.JobStatusFailed })
	d, _ = h.doctorJSON("rayjob/fails")
	f = d.finding(t, st.RayClusterName, "ray-job-failed")
	wantContains(t, "message", f.Message, "Ray reports the Ray job "+st.JobId+" of RayJob fails FAILED (JOB_ENTRYPOINT_COMMAND_ERROR)", "Job entrypoint command failed with exit code 1")

	// A user who may read but not port-forward (the sandbox's reader: exactly doctor's role
	// without --ray): one finding, naming the permission; the run goes on.
	d, res = h.doctorJSON("rayservice/rs", "--context", "sandbox-reader")
	fs := rayFindings(d)
	if len(fs) != 1 || fs[0].Rule != "ray-dashboard-unreachable" || fs[0].Evidence["reason"] != "forbidden" || res.Code != 0 {
		t.Fatalf("forbidden port-forward: Ray findings %+v, exit %d\n%s", fs, res.Code, res)
	}
	wantContains(t, "message", fs[0].Message, "pods/portforward")
	wantContains(t, "remedy", fs[0].Remedy, `RBAC verb "create" on "pods/portforward"`)
	if err := ray.Err(); err != nil {
		t.Errorf("Ray stand-ins: %v", err)
	}
}

// testDoctorRayNoDashboard: a RayCluster whose head has no dashboard behind its port (no
// stand-in runs in this namespace: kwok has no PortForward for the pod).
func testDoctorRayNoDashboard(t *testing.T, h *H) {
	h.CreateRayCluster("plain", nil)
	h.WaitClusterRunning("plain", 90*time.Second)
	d, res := h.doctorJSON("--ray", "--fail-on", "warning")
	fs := rayFindings(d)
	if len(fs) != 1 || fs[0].Rule != "ray-dashboard-unreachable" || fs[0].Evidence["reason"] != "unconnected" || res.Code != 1 {
		t.Fatalf("no dashboard: Ray findings %+v, exit %d (want one warning, exit 1 with --fail-on warning)\n%s", fs, res.Code, res)
	}
	wantContains(t, "message", fs[0].Message, "nothing answers on that port inside the pod: no forward found for port 8265")
	// client-go v0.34 printed these as "Unhandled Error"; v0.37 with its own messages.
	for _, leak := range []string{"Unhandled Error", "An error occurred forwarding", "Error copying from"} {
		if strings.Contains(res.Stderr, leak) {
			t.Errorf("client-go's port-forward errors reached stderr (%q):\n%s", leak, res.Stderr)
		}
	}
}
