package e2e

import (
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// statusCheckTimeout is the v1.7.0 operator's RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS in the sandbox
// of TestRayJobStatusCheckTimeoutV170: short, so the case does not wait the default 300 s.
const statusCheckTimeout = "15"

// v170StatusCheck is a v1.7.0 sandbox of its own: the timeout is read from the operator's
// environment, for every RayJob it runs, and the matrix's v1.7.0 RayJobs stay Running longer
// than this (rayjob-submitter's, while its submitter retries).
var v170StatusCheck = &lazySandbox{what: "KubeRay v1.7.0 with a short job status check timeout", cfg: sandbox.Config{
	Dir: "sandbox-v1.7.0-status-check", Operator: sandbox.OperatorV170, ServeNetwork: true,
	OperatorEnv: []string{"RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS=" + statusCheckTimeout}}}

// KubeRay v1.7.0 fails a Running RayJob whose Ray job status it cannot read from the dashboard
// for RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS (recordJobStatusCheckFailure, then
// checkJobStatusCheckTimeoutAndUpdateStatusIfNeeded: reason JobStatusCheckTimeoutExceeded), and
// never retries it. Nothing is played for the failure: no Ray runs, so the sandbox's pod network
// answers the operator's GetJobInfo with a 502, as a cluster whose dashboard is down would; kwok
// plays the kubelet (the Ray pods Ready, the submitter's pod run). The real operator fails the
// RayJob on its own clock; doctor names the reason, where to look, and that its cluster still
// runs. About 35 s, with a sandbox of its own (about 15 s to start, in parallel with the others).
func TestRayJobStatusCheckTimeoutV170(t *testing.T) {
	t.Parallel()
	h := newHOn(t, v170StatusCheck.get(t))
	h.createRayJob("blind", nil)
	st := h.waitRayJob("blind", "Failed", 120*time.Second, func(s rayv1.RayJobStatus) bool {
		return s.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed
	})
	if string(st.Reason) != "JobStatusCheckTimeoutExceeded" {
		t.Fatalf("KubeRay v1.7.0 failed the RayJob with %q (%s), want JobStatusCheckTimeoutExceeded\noperator: %s",
			st.Reason, st.Message, h.SB.LogTail("kuberay-operator", 10))
	}
	d, res := h.doctorJSON()
	f := d.finding(t, st.RayClusterName, "rayjob-failed")
	wantContains(t, "message", f.Message, "RayJob "+h.NS+"/blind Failed",
		"the operator could not read the Ray job's status from the dashboard for too long, and gave it up without retrying",
		"Job status checks have been failing since", "exceeded timeout of "+statusCheckTimeout+"s")
	wantContains(t, "remedy", f.Remedy, "kubectl ray doctor "+st.RayClusterName, "an unreachable dashboard",
		"Job status check began failing", "the Ray job may have gone on running")
	if f.Severity != "error" || f.RayJob == nil || f.RayJob.Name != "blind" || res.Code != 1 {
		t.Errorf("severity %s, rayJob %+v, exit %d\n%s", f.Severity, f.RayJob, res.Code, res)
	}
	hold := d.finding(t, st.RayClusterName, "rayjob-finished-holding")
	wantContains(t, "message", hold.Message, "and its RayCluster "+st.RayClusterName+" still runs")
	if got := d.rules(st.RayClusterName); len(got) != 2 {
		t.Errorf("findings about the RayJob's cluster: %v, want only the two RayJob findings", got)
	}
}
