package diagnose

import (
	"fmt"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
)

// RuleRayJobClusterFailed is an invariant between a RayJob's phase and its cluster's: a RayJob
// Initializing waits for its RayCluster to become ready (every version submits only then), so a
// cluster whose status records that the API server refuses its pods (v1.1.1: state "failed"
// with the refusal as its reason; v1.5.0+: ReplicaFailure=True) holds the RayJob until somebody
// changes the quota, the policy or the spec. Nothing the operator does on its own resolves it:
// it retries the refused pod, and the refusal is written again.
const RuleRayJobClusterFailed = "rayjob-cluster-failed"

// rayJobClusterFailed reports an Initializing RayJob whose cluster's status records a refused
// head or worker, the refusals going on for longer than OperatorGrace (a refusal recorded once
// may be cleared by the next reconcile). rayJobInitializing stays silent on such a RayJob.
func rayJobClusterFailed(ix *index, j *jobView) []Finding {
	r, waited, ok := ix.jobClusterFailure(j)
	if !ok {
		return nil
	}
	what := "its head pod"
	if r.role == "worker" {
		what = "its worker pods"
		if r.group != "" {
			what = "the pods of its worker group " + r.group
		}
	}
	ev := jobEvidence(j.job)
	ev["age"], ev["clusterStatus"] = age(waited), r.status
	if r.event != "" {
		ev["operatorEvent"] = r.event
	}
	msg := fmt.Sprintf("%s has been Initializing for %s and its RayCluster %s has failed: the API server refuses %s: %s; the operator submits only once the cluster is ready, "+
		"and it retries the refused pod forever, so the RayJob waits until the cause is removed", j.what(), age(waited), j.cluster.rc.Name, what, r.describe(ix.s.Now))
	return []Finding{j.finding(RuleRayJobClusterFailed, msg, r.remedy(j.cluster), ev)}
}

// jobClusterFailure is the refusal the status of j's cluster records, and how long j has been
// Initializing, when j is Initializing on a cluster (not being deleted) whose refusals have gone
// on past OperatorGrace: since the status condition's transition or the first Event (v1.1.1's
// state carries no time), else since the cluster was made.
func (ix *index) jobClusterFailure(j *jobView) (*refusal, time.Duration, bool) {
	st := j.job.Status
	if st.JobDeploymentStatus != rayv1.JobDeploymentStatusInitializing || st.StartTime == nil || j.cluster == nil || j.cluster.rc.DeletionTimestamp != nil {
		return nil, 0, false
	}
	waited := ix.s.Now.Sub(st.StartTime.Time)
	for _, role := range []string{"head", "worker"} {
		r := ix.refusalFor(j.cluster, role, "")
		if r == nil || r.status == "" {
			continue
		}
		since := r.since
		if since.IsZero() {
			since = j.cluster.rc.CreationTimestamp.Time
		}
		if ix.s.Now.Sub(since) > ix.opts.OperatorGrace {
			return r, waited, true
		}
	}
	return nil, 0, false
}
