package diagnose

import (
	"fmt"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// RuleRayJobStatusCheckFailing is an invariant between a RayJob's phase and the operator's
// record of its reads: KubeRay v1.7.0 writes status.jobStatusCheckFailureStartTime when it can
// no longer read the Ray job's status from the dashboard, clears it at the next read that
// succeeds, and fails the RayJob (JobStatusCheckTimeoutExceeded, never retried, whatever its
// backoffLimit) once RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS have passed (rayjob_controller.go
// recordJobStatusCheckFailure, checkJobStatusCheckTimeoutAndUpdateStatusIfNeeded). A RayJob still
// Running with the time set is blind and on a countdown, and nothing else says so until it fails.
const RuleRayJobStatusCheckFailing = "rayjob-status-check-failing"

// rayJobStatusCheckFailing reports a RayJob not yet finished whose status reads have been failing
// since the time the operator wrote, with when the operator will fail it.
func rayJobStatusCheckFailing(ix *index, j *jobView) []Finding {
	st := j.job.Status
	since := ix.s.JobsNewer[key(j.job.Namespace, j.job.Name)].JobStatusCheckFailureStartTime
	if since == nil || j.job.DeletionTimestamp != nil || rayv1.IsJobDeploymentTerminal(st.JobDeploymentStatus) ||
		st.JobDeploymentStatus == rayv1.JobDeploymentStatusValidationFailed {
		return nil
	}
	failing := ix.s.Now.Sub(since.Time)
	timeout, from := ix.statusCheckTimeout()
	ev := jobEvidence(j.job)
	ev["failingSince"] = since.UTC().Format(time.RFC3339)
	ev["age"] = age(failing)
	ev["timeout"] = fmt.Sprintf("%ds", int(timeout.Seconds()))
	left := timeout - failing
	when := "in " + age(left)
	if left <= 0 {
		when = "now (its next reconcile)"
	}
	msg := fmt.Sprintf("%s is %s, but the operator has not been able to read its Ray job's status from the dashboard for %s (since %s): "+
		"it fails the RayJob %s, with reason JobStatusCheckTimeoutExceeded and no retry, unless a read succeeds before then (timeout %s, %s)",
		j.what(), st.JobDeploymentStatus, age(failing), ev["failingSince"], when, ev["timeout"], from)
	remedy := "read Ray's view of its cluster (kubectl ray doctor " + orNone(st.RayClusterName) + " --ray: an unreachable dashboard, a GCS down, a token Ray refuses) and " +
		ix.operatorLogs() + " (\"Failed to get job info\"); to give it longer, raise " + ray.EnvJobStatusCheckTimeout + " in the operator's env"
	return []Finding{j.finding(RuleRayJobStatusCheckFailing, msg, remedy, ev)}
}

// statusCheckTimeout is the operators' RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS, and where it comes
// from: the one operator found, or KubeRay's default when none is found or they differ.
func (ix *index) statusCheckTimeout() (time.Duration, string) {
	var found *ray.Operator
	for i := range ix.operators {
		op := &ix.operators[i]
		if found != nil && found.StatusCheckTimeout() != op.StatusCheckTimeout() {
			return ray.DefaultJobStatusCheckTimeout, "KubeRay's default; the operators found set it differently"
		}
		found = op
	}
	switch {
	case found == nil:
		return ray.DefaultJobStatusCheckTimeout, "KubeRay's default; no operator was found to read it from"
	case found.JobStatusCheckTimeout == "":
		return found.StatusCheckTimeout(), "KubeRay's default, which operator " + found.Namespace + "/" + found.Name + " does not change"
	case found.StatusCheckTimeout() == ray.DefaultJobStatusCheckTimeout && found.JobStatusCheckTimeout != "300":
		return found.StatusCheckTimeout(), fmt.Sprintf("KubeRay's default: operator %s/%s's %s, %q, is not a positive number of seconds",
			found.Namespace, found.Name, ray.EnvJobStatusCheckTimeout, found.JobStatusCheckTimeout)
	}
	return found.StatusCheckTimeout(), "operator " + found.Namespace + "/" + found.Name + "'s " + ray.EnvJobStatusCheckTimeout
}
