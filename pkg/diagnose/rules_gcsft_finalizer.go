package diagnose

import (
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/kubectl-ray/kubectl-ray/pkg/flagname"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleGCSFTFinalizerStuck: a RayCluster's deletion waits on KubeRay's Redis cleanup finalizer
// (kuberay #1557, #4721, #4767).
const RuleGCSFTFinalizerStuck = "gcs-ft-finalizer-stuck"

// gcsFTFinalizerStuck: the RayCluster has been deleting for longer than FinalizerStuckAfter and
// still carries the Redis cleanup finalizer. Every release (v1.1.1, v1.5.0, v1.6.0 read alike)
// deletes the pods, waits until no head pod is left, creates the Job <cluster>-redis-cleanup
// (backoffLimit 0, activeDeadlineSeconds 300) and removes the finalizer once the Job is Complete
// or Failed; so a normal deletion ends within about five minutes of the head being gone.
func gcsFTFinalizerStuck(ix *index, c *clusterView) []Finding {
	rc := c.rc
	if rc.DeletionTimestamp == nil || !ray.HasGCSFTFinalizer(rc) {
		return nil
	}
	deleting := ix.s.Now.Sub(rc.DeletionTimestamp.Time)
	if deleting < ix.opts.FinalizerStuckAfter {
		return nil
	}
	storageNS := ray.StorageNamespace(rc)
	verdict, op := ix.operatorVerdict()
	// KubeRay v1.6.2 and later remove the finalizer themselves once the head pods are gone and the
	// deletion is older than the cluster's timeout (ForceDeletedStuckCluster): until then, and an
	// operator grace after, it is on its way, and heal must not race it.
	release, forces := ix.forcesGCSFTFinalizer()
	forceAfter := ray.GCSFTDeletionTimeout(rc)
	if forces && verdict != opAbsent && len(c.heads) == 0 && deleting < forceAfter+ix.opts.OperatorGrace {
		return nil
	}
	ev := map[string]string{
		"finalizer":        ray.FinalizerGCSFTRedisCleanup,
		"deletingFor":      age(deleting),
		"deletionStarted":  rc.DeletionTimestamp.UTC().Format(time.RFC3339),
		"storageNamespace": storageNS,
		"operator":         op,
	}
	var why string
	if forces && verdict != opAbsent && len(c.heads) == 0 {
		why = fmt.Sprintf("KubeRay %s removes it itself %s after the deletion began once the head is gone (ForceDeletedStuckCluster), and has not, so it is not reconciling this cluster", release, age(forceAfter))
		ev["forceRemovalAfter"] = age(forceAfter)
	}
	cleaned := false
	job := ix.cleanupJobs[key(rc.Namespace, rc.Name)]
	heads := c.heads
	switch {
	case verdict == opAbsent:
		why = "nothing will remove it: " + op + " was found"
	case len(heads) > 0:
		var names []string
		for _, h := range heads {
			names = append(names, h.Name+" ("+podState(h)+")")
		}
		why = "the operator waits for the head pod to be gone before it starts the Redis cleanup, and head pod " +
			strings.Join(names, ", ") + " is still there"
	}
	switch {
	case !ix.s.CanSee("jobs"):
		ev["cleanupJob"] = "not visible"
		if why == "" {
			why = "Jobs could not be listed, so the cleanup Job's state is unknown"
		}
	case job == nil:
		ev["cleanupJob"] = "none"
		if why == "" {
			why = "no Redis cleanup Job exists, so the operator failed to create it (its FailedToCreateRedisCleanupJob Events say why; " +
				"in a namespace being deleted it never can, kuberay #3388) or is not reconciling this cluster"
		}
	default:
		jobState := cleanupJobState(job, ix.s.Now)
		ev["cleanupJob"], ev["jobState"] = job.Name, jobState
		finished, complete := jobFinished(job)
		cleaned = complete
		switch {
		case why != "":
			why += "; cleanup Job " + job.Name + " is " + jobState
		case finished:
			why = "cleanup Job " + job.Name + " is " + jobState + " and every KubeRay release removes the finalizer once it finished, so the operator is not reconciling this cluster"
		case job.Spec.Suspend != nil && *job.Spec.Suspend:
			why = "cleanup Job " + job.Name + " is suspended (a queue such as Kueue holds it, kuberay #4773) and never runs"
		default:
			why = "cleanup Job " + job.Name + " is " + jobState
		}
	}
	left := fmt.Sprintf("removing the finalizer by hand leaves the GCS data of storage namespace %s in Redis (the cluster's "+
		"gcsFaultToleranceOptions.redisAddress or RAY_REDIS_ADDRESS): delete those keys there", storageNS)
	if cleaned {
		left = "the cleanup Job completed, so Redis holds nothing of storage namespace " + storageNS + " any more"
	}
	heal := fmt.Sprintf("kubectl ray heal %s -n %s %s", rc.Name, rc.Namespace, flagname.Flag(flagname.RemoveGCSFTFinalizer))
	msg := fmt.Sprintf("RayCluster %s has been deleting for %s, held by finalizer %s: %s; %s (kuberay #1557, #4721, #4767)",
		key(rc.Namespace, rc.Name), age(deleting), ray.FinalizerGCSFTRedisCleanup, why, left)
	remedy := "fix what holds the cleanup (" + ix.operatorLogs() + "); or remove the finalizer with `" + heal + "`"
	if !cleaned {
		remedy += " and clean storage namespace " + storageNS + " out of Redis yourself"
	}
	f := c.finding(RuleGCSFTFinalizerStuck, state.ClusterRef(rc), msg, remedy, ev)
	f.Facts.Operator, f.Facts.CleanupJobComplete = op, cleaned
	return []Finding{f}
}

// jobFinished reads a Job as KubeRay's IsJobFinished does: a Complete or Failed condition True.
func jobFinished(j *batchv1.Job) (finished, complete bool) {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, true
		case batchv1.JobFailed:
			return true, false
		}
	}
	return false, false
}

// cleanupJobState is "Complete", "Failed (DeadlineExceeded)", "suspended", "running for 3m
// (1 active)" or "created 3m ago, no pod running".
func cleanupJobState(j *batchv1.Job, now time.Time) string {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return "Complete"
		case batchv1.JobFailed:
			if c.Reason != "" {
				return "Failed (" + c.Reason + ")"
			}
			return "Failed"
		}
	}
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		return "suspended"
	}
	if j.Status.StartTime != nil && j.Status.Active > 0 {
		return fmt.Sprintf("running for %s (%d active)", age(now.Sub(j.Status.StartTime.Time)), j.Status.Active)
	}
	return fmt.Sprintf("created %s ago, no pod running", age(now.Sub(j.CreationTimestamp.Time)))
}

// indexCleanupJobs maps namespace/cluster to the cluster's Redis cleanup Job (label
// ray.io/cluster); with several, the operator reads the first it lists, so does doctor.
func indexCleanupJobs(jobs []batchv1.Job) map[string]*batchv1.Job {
	out := make(map[string]*batchv1.Job, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		k := key(j.Namespace, j.Labels[ray.LabelCluster])
		if _, seen := out[k]; !seen && j.Labels[ray.LabelCluster] != "" {
			out[k] = j
		}
	}
	return out
}

// forcesGCSFTFinalizer is the release of the one operator when it removes a stuck Redis cleanup
// finalizer itself (v1.6.2 and later).
func (ix *index) forcesGCSFTFinalizer() (string, bool) {
	op, ok := ix.targetOperator()
	if !ok {
		return "", false
	}
	return op, version.MustParseSemantic(op).AtLeast(ray.ForcesGCSFTFinalizerSince)
}
