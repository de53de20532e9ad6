package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// statusCheckTimeout is the v1.7.0 operator's RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS in the sandbox
// of TestRayJobStatusCheckTimeoutV170: short, so the case does not wait the default 300 s, and
// long enough for a doctor and a bundle while the countdown runs.
const statusCheckTimeout = "40"

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
// plays the kubelet (the Ray pods Ready). While the RayJob is Running
// with status.jobStatusCheckFailureStartTime (a field the plugin's API types predate), doctor
// warns of the countdown with the operator's own timeout (from its Deployment's env), and a
// bundle keeps the field for doctor --from. Then the real operator fails the RayJob on its own
// clock; doctor names the reason, where to look, and that its cluster still runs. About 60 s,
// with a sandbox of its own (about 15 s to start, in parallel with the others).
func TestRayJobStatusCheckTimeoutV170(t *testing.T) {
	t.Parallel()
	h := newHOn(t, v170StatusCheck.get(t))
	// HTTPMode: the operator reads the job's status from the start, and no submitter ends first
	// (a finished submitter fails the RayJob 30 s later with
	// JobDeploymentStatusTransitionGracePeriodExceeded, before a timeout of 40 s).
	h.createRayJob("blind", func(j *rayv1.RayJob) { j.Spec.SubmissionMode = rayv1.HTTPMode })
	h.WaitFor("the operator to record the failing status reads", 120*time.Second, func() (bool, error) {
		raw, err := h.Ray.RayV1().RESTClient().Get().Namespace(h.NS).Resource("rayjobs").Name("blind").Do(h.Ctx).Raw()
		if err != nil {
			return false, err
		}
		n, err := ray.RayJobNewerOf(raw)
		return n.JobStatusCheckFailureStartTime != nil, err
	})
	job, err := h.Ray.RayV1().RayJobs(h.NS).Get(h.Ctx, "blind", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d, res := h.doctorJSON()
	cd := d.finding(t, job.Status.RayClusterName, "rayjob-status-check-failing")
	wantContains(t, "the countdown", cd.Message, "RayJob "+h.NS+"/blind is Running, but the operator has not been able to read its Ray job's status from the dashboard",
		"with reason JobStatusCheckTimeoutExceeded and no retry", "(timeout "+statusCheckTimeout+"s, operator "+sandbox.OperatorNamespace+"/"+sandbox.OperatorName+"'s RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS)")
	if cd.Severity != "warning" || cd.RayJob == nil || cd.RayJob.Name != "blind" || cd.Evidence["failingSince"] == "" {
		t.Errorf("the countdown: %+v\n%s", cd, res)
	}
	archive := filepath.Join(t.TempDir(), "blind.tar.gz")
	if res := h.Run("bundle", "blind", "-o", archive, "--no-ray-logs", "--ray=false"); res.Code != 0 {
		t.Fatalf("bundle: %s", res)
	}
	from := h.Run("doctor", "--from", archive, "-o", "json", "--kubeconfig", "/nonexistent")
	if !strings.Contains(from.Stdout, `"rule": "rayjob-status-check-failing"`) || !strings.Contains(from.Stdout, cd.Evidence["failingSince"]) {
		t.Errorf("doctor --from the bundle lost the RayJob's failing reads: %s", from)
	}

	st := h.waitRayJob("blind", "Failed", 120*time.Second, func(s rayv1.RayJobStatus) bool {
		return s.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed
	})
	if string(st.Reason) != "JobStatusCheckTimeoutExceeded" {
		t.Fatalf("KubeRay v1.7.0 failed the RayJob with %q (%s), want JobStatusCheckTimeoutExceeded\noperator: %s",
			st.Reason, st.Message, h.SB.LogTail("kuberay-operator", 10))
	}
	d, res = h.doctorJSON()
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
