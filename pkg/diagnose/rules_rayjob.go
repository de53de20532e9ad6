package diagnose

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RayJob rules read what the operator wrote in a RayJob's status (read in each version's
// controllers/ray/rayjob_controller.go): jobDeploymentStatus (the operator's lifecycle), jobStatus
// (Ray's, copied from the dashboard), reason and message. The operator records no Event when a
// RayJob fails, so the status is the only place it says why.
const (
	RuleRayJobFailed        = "rayjob-failed"
	RuleRayJobInitializing  = "rayjob-initializing"
	RuleRayJobFinishedHolds = "rayjob-finished-holding"
	// reasonStatusCheckTimeout: KubeRay v1.7.0 fails a RayJob whose job status it could not read
	// from the dashboard for RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS (checkJobStatusCheckTimeout-
	// AndUpdateStatusIfNeeded), and never retries it (backoffLimit does not apply).
	reasonStatusCheckTimeout = "JobStatusCheckTimeoutExceeded"
)

// jobView is one RayJob with its RayCluster, when the snapshot holds it, and what the cluster
// rules found there.
type jobView struct {
	job      *rayv1.RayJob
	cluster  *clusterView
	findings []Finding // the cluster's findings, for why a RayJob waits
}

type jobRule func(*index, *jobView) []Finding

// jobRules run on every RayJob, in this order.
var jobRules = []jobRule{rayJobFailed, rayJobClusterFailed, rayJobRetryDeletesCluster, rayJobInitializing, rayJobSubmitterFailing, rayJobStatusCheckFailing, rayJobFinishedHolds}

// JobReport is one RayJob checked.
type JobReport struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
	Health    Health `json:"health"`
	// Cluster is the RayCluster it runs on, "" when there is none (not created yet, or deleted
	// after the job).
	Cluster             string `json:"cluster,omitempty"`
	JobDeploymentStatus string `json:"jobDeploymentStatus"`
	JobStatus           string `json:"jobStatus,omitempty"`
}

// jobViews links each RayJob to its cluster: the name in its status, or the cluster it owns.
func (ix *index) jobViews() []*jobView {
	byKey := make(map[string]*clusterView, len(ix.clusters))
	byOwner := map[string]*clusterView{}
	for _, c := range ix.clusters {
		byKey[key(c.rc.Namespace, c.rc.Name)] = c
		if c.owner != nil && c.owner.Kind == "RayJob" {
			byOwner[key(c.rc.Namespace, c.owner.Name)] = c
		}
	}
	out := make([]*jobView, 0, len(ix.s.Jobs))
	for i := range ix.s.Jobs {
		j := &ix.s.Jobs[i]
		v := &jobView{job: j, cluster: byOwner[key(j.Namespace, j.Name)]}
		if n := j.Status.RayClusterName; n != "" && byKey[key(j.Namespace, n)] != nil {
			v.cluster = byKey[key(j.Namespace, n)]
		}
		out = append(out, v)
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].job.Namespace != out[b].job.Namespace {
			return out[a].job.Namespace < out[b].job.Namespace
		}
		return out[a].job.Name < out[b].job.Name
	})
	return out
}

// what names the RayJob, and the RayCronJob that made it (KubeRay v1.7.0): its findings are
// fixed in that RayCronJob's template, not in the RayJob.
func (j *jobView) what() string {
	what := "RayJob " + key(j.job.Namespace, j.job.Name)
	if run, ok := ray.CronRunOf(j.job); ok {
		what += " (RayCronJob " + run.CronJob + "'s run"
		if run.Tick != "" {
			what += " for " + run.Tick
		}
		what += ")"
	}
	return what
}

// resubmit is how a failed RayJob runs again: created anew by its user; or, when a RayCronJob
// made it, never: its next tick makes a new RayJob from spec.jobTemplate, where the fix goes.
func (j *jobView) resubmit() string {
	if run, ok := ray.CronRunOf(j.job); ok {
		return "in RayCronJob " + run.CronJob + "'s spec.jobTemplate, which each run copies (kubectl edit raycronjob " + run.CronJob + " -n " + j.job.Namespace +
			"): this run is not run again, and the next tick makes a new RayJob"
	}
	return "then submit the RayJob again (kubectl delete and create it)"
}

// nextJobs is where a setting for the RayJobs to come goes: on them, or in the template of the
// RayCronJob that makes them.
func (j *jobView) nextJobs() string {
	if run, ok := ray.CronRunOf(j.job); ok {
		return "in RayCronJob " + run.CronJob + "'s spec.jobTemplate (each of its runs makes a RayCluster of its own, and each stays without it)"
	}
	return "on the next RayJobs"
}

func (j *jobView) ref() state.Ref {
	return state.Ref{Kind: "RayJob", Namespace: j.job.Namespace, Name: j.job.Name, UID: string(j.job.UID)}
}

func (j *jobView) finding(rule, msg, remedy string, ev map[string]string) Finding {
	r := j.ref()
	f := Finding{Rule: rule, Severity: severityOf(rule), Object: r, RayJob: &r, Message: msg, Remedy: remedy, Evidence: ev}
	if j.cluster != nil {
		f.Cluster = state.ClusterRef(j.cluster.rc)
	}
	return f
}

// report is the RayJob's line in the report. Its health is the worst of its own findings and its
// cluster's: a RayJob whose cluster has no head is not healthy, even before rayjob-initializing.
func (j *jobView) report(fs []Finding) JobReport {
	all := append(append([]Finding(nil), fs...), j.findings...)
	jr := JobReport{Namespace: j.job.Namespace, Name: j.job.Name, UID: string(j.job.UID), Health: HealthOf(all),
		JobDeploymentStatus: string(j.job.Status.JobDeploymentStatus), JobStatus: string(j.job.Status.JobStatus)}
	if j.cluster != nil {
		jr.Cluster = j.cluster.rc.Name
	}
	return jr
}

// jobEvidence is what every RayJob finding carries.
func jobEvidence(j *rayv1.RayJob) map[string]string {
	ev := map[string]string{"jobDeploymentStatus": string(j.Status.JobDeploymentStatus)}
	for k, v := range map[string]string{"jobStatus": string(j.Status.JobStatus), "reason": string(j.Status.Reason),
		"jobId": j.Status.JobId, "submissionMode": string(j.Spec.SubmissionMode), "rayCluster": j.Status.RayClusterName} {
		if v != "" {
			ev[k] = v
		}
	}
	if run, ok := ray.CronRunOf(j); ok {
		ev["rayCronJob"] = run.CronJob
		if run.Tick != "" {
			ev["scheduledFor"] = run.Tick
		}
	}
	return ev
}

// rayJobFailed: the operator gave the RayJob up (Failed, or ValidationFailed, which v1.5.0+
// never reconciles again). One finding, with the reason the operator wrote and where to look.
func rayJobFailed(ix *index, j *jobView) []Finding {
	st := j.job.Status
	if st.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed && st.JobDeploymentStatus != rayv1.JobDeploymentStatusValidationFailed {
		return nil
	}
	ns, name := j.job.Namespace, j.job.Name
	said := strings.TrimRight(strings.TrimSpace(st.Message), ".")
	if said == "" {
		said = "the operator wrote no message"
	}
	ended := ""
	if st.EndTime != nil {
		ended = " " + age(ix.s.Now.Sub(st.EndTime.Time)) + " ago"
	}
	if st.Failed != nil && *st.Failed > 1 {
		ended += fmt.Sprintf(" after %d attempts", *st.Failed)
	}
	submitterLog := "kubectl logs job/" + name + " -n " + ns + " (KubeRay keeps the submitter Job for its logs)"
	if j.job.Spec.SubmissionMode == rayv1.SidecarMode {
		submitterLog = "kubectl logs -l ray.io/cluster=" + st.RayClusterName + ",ray.io/node-type=head -c ray-job-submitter -n " + ns
	}
	resubmit := j.resubmit()
	var why, remedy string
	switch {
	case st.JobDeploymentStatus == rayv1.JobDeploymentStatusValidationFailed || st.Reason == rayv1.ValidationFailed:
		why = "the operator refused its spec: " + said
		remedy = "fix the spec and create the RayJob again: KubeRay does not reconcile a RayJob again after ValidationFailed"
	case st.Reason == rayv1.SubmissionFailed:
		why = "its submitter could not submit the Ray job: " + said
		remedy = "read the submitter's log: " + submitterLog + "; fix the entrypoint, runtimeEnvYAML or the submitter's image, " + resubmit
	case st.Reason == rayv1.AppFailed:
		job := "the Ray job"
		if st.JobId != "" {
			job += " " + st.JobId
		}
		why = job + " failed: " + said
		remedy = "read the job's driver log: " + submitterLog + ", or the Ray dashboard's Jobs page; fix the job, " + resubmit
	case st.Reason == rayv1.DeadlineExceeded:
		limit := ""
		if d := j.job.Spec.ActiveDeadlineSeconds; d != nil {
			limit = fmt.Sprintf(" (%ds)", *d)
		}
		why = "it ran past spec.activeDeadlineSeconds" + limit + ": " + said
		remedy = "raise spec.activeDeadlineSeconds if the job needs longer, or find what held it (its RayCluster's findings: a head or workers that never came up), " + resubmit
	case st.Reason == rayv1.PreRunningDeadlineExceeded: // v1.6.0
		why = "it did not start running within spec.preRunningDeadlineSeconds: " + said
		remedy = "find what held it before it ran (its RayCluster's findings: a head or workers that never came up), or raise spec.preRunningDeadlineSeconds, " + resubmit
	case string(st.Reason) == reasonStatusCheckTimeout:
		why = "the operator could not read the Ray job's status from the dashboard for too long, and gave it up without retrying: " + said
		remedy = "read Ray's view of its cluster (kubectl ray doctor " + orNone(st.RayClusterName) + ": an unreachable dashboard, a GCS down, a token Ray refuses) and " + ix.operatorLogs() +
			" (\"Job status check began failing\"); the Ray job may have gone on running in the cluster; " + resubmit
	case st.Reason == rayv1.JobDeploymentStatusTransitionGracePeriodExceeded:
		why = "the operator stopped waiting for the Ray job to end: " + said
		remedy = "read the submitter's log (" + submitterLog + ") and " + ix.operatorLogs() + "; " + resubmit
	default:
		why = "(" + orNone(string(st.Reason)) + "): " + said
		remedy = "kubectl describe rayjob " + name + " -n " + ns + " and read " + ix.operatorLogs()
	}
	msg := fmt.Sprintf("%s %s%s: %s", j.what(), st.JobDeploymentStatus, ended, why)
	return []Finding{j.finding(RuleRayJobFailed, msg, remedy, jobEvidence(j.job))}
}

// rayJobInitializing: Initializing for longer than RayJobInitializingTooLong. The operator submits
// only once its RayCluster's state is ready, so what holds the job is the cluster: doctor says
// which of the cluster's findings it is, or that the cluster is missing.
func rayJobInitializing(ix *index, j *jobView) []Finding {
	st := j.job.Status
	if st.JobDeploymentStatus != rayv1.JobDeploymentStatusInitializing || st.StartTime == nil {
		return nil
	}
	waited := ix.s.Now.Sub(st.StartTime.Time)
	if waited <= ix.opts.RayJobInitializingTooLong {
		return nil
	}
	if _, _, failed := ix.jobClusterFailure(j); failed {
		return nil // rayjob-cluster-failed says it, as an error
	}
	ev := jobEvidence(j.job)
	ev["age"] = age(waited)
	warn := ix.jobWarning(j.job) // v1.5.0+: what the operator failed to do, in its own words
	if warn != nil {
		ev["operatorWarning"] = warn.reason
	}
	var why, remedy string
	switch {
	case j.cluster == nil && warn != nil:
		why = "its RayCluster " + orNone(st.RayClusterName) + " does not exist, and the operator reports: " + warn.describe(ix.s.Now)
		remedy = warn.remedy("rayjob", j.job.Namespace, j.job.Name)
	case j.cluster == nil:
		why = "its RayCluster " + orNone(st.RayClusterName) + " does not exist"
		remedy = "kubectl describe rayjob " + j.job.Name + " -n " + j.job.Namespace + " for the operator's Warning Events (FailedToCreateRayCluster), and read " + ix.operatorLogs()
	case len(j.findings) > 0:
		worst := j.findings[0]
		for _, f := range j.findings[1:] {
			if f.Severity.Rank() > worst.Severity.Rank() {
				worst = f
			}
		}
		var rules []string
		for _, f := range j.findings {
			rules = append(rules, f.Rule)
		}
		why = fmt.Sprintf("the operator submits only once RayCluster %s is ready, and it is not: %s: %s", j.cluster.rc.Name, worst.Rule, worst.Message)
		remedy = "act on RayCluster " + j.cluster.rc.Name + "'s findings (" + strings.Join(rules, ", ") + "): " + worst.Remedy
		ev["clusterFindings"] = strings.Join(rules, ",")
	case ix.refusalFor(j.cluster, "head", "") != nil || ix.refusalFor(j.cluster, "worker", "") != nil:
		// The cluster is too young for head-missing or workers-missing, but the operator has
		// already reported why its pods do not come.
		r, what := ix.refusalFor(j.cluster, "head", ""), "head pod"
		if r == nil {
			r, what = ix.refusalFor(j.cluster, "worker", ""), "new worker pods"
		}
		why = fmt.Sprintf("the operator submits only once RayCluster %s is ready, and the API server refuses its %s: %s", j.cluster.rc.Name, what, r.describe(ix.s.Now))
		remedy = r.remedy(j.cluster)
	case warn != nil:
		why = fmt.Sprintf("the operator works on it with RayCluster %s (its state is %q), and reports: %s", j.cluster.rc.Name, j.cluster.rc.Status.State, warn.describe(ix.s.Now))
		remedy = warn.remedy("rayjob", j.job.Namespace, j.job.Name)
	default:
		running, ready := 0, 0
		all := append(append([]*corev1.Pod(nil), j.cluster.heads...), j.cluster.workers...)
		for _, p := range all {
			if ray.Running(p) {
				running++
			}
			if ray.RunningReady(p) {
				ready++
			}
		}
		why = fmt.Sprintf("the operator submits only once RayCluster %s is ready (its state is %q; %d of %d pods Running, %d Ready)",
			j.cluster.rc.Name, j.cluster.rc.Status.State, running, len(all), ready)
		remedy = "kubectl ray doctor " + j.cluster.rc.Name + " -n " + j.job.Namespace + " -o wide, and kubectl describe raycluster " + j.cluster.rc.Name + " -n " + j.job.Namespace
	}
	msg := fmt.Sprintf("%s has been Initializing for %s (longer than %s): %s", j.what(), age(waited), age(ix.opts.RayJobInitializingTooLong), why)
	return []Finding{j.finding(RuleRayJobInitializing, msg, remedy, ev)}
}

// rayJobFinishedHolds: a finished RayJob whose own RayCluster still runs pods. Without
// shutdownAfterJobFinishes no version deletes it; with it, the operator deletes it
// ttlSecondsAfterFinished after the end, so one still there well past that is worth saying too.
// A cluster the RayJob only borrowed (spec.clusterSelector) is the user's to keep.
func rayJobFinishedHolds(ix *index, j *jobView) []Finding {
	st, spec := j.job.Status, j.job.Spec
	unmatched := rulesNeverMatch(j.job)
	if (st.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete && st.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed) ||
		j.cluster == nil || len(spec.ClusterSelector) > 0 || spec.DeletionStrategy != nil && unmatched == "" || j.cluster.rc.DeletionTimestamp != nil {
		return nil // a deletionStrategy (v1.5.0+, feature gate RayJobDeletionPolicy) has its own rules and TTLs
	}
	live := 0
	for _, p := range append(append([]*corev1.Pod(nil), j.cluster.heads...), j.cluster.workers...) {
		if ray.Live(p) {
			live++
		}
	}
	if live == 0 {
		return nil
	}
	since := ""
	var finished time.Duration
	if st.EndTime != nil {
		finished = ix.s.Now.Sub(st.EndTime.Time)
		since = " " + age(finished) + " ago"
	}
	ev := jobEvidence(j.job)
	ev["pods"] = fmt.Sprint(live)
	var why, remedy string
	if unmatched != "" {
		why = unmatched
		remedy = "add a deletion rule on the RayJob's final state, e.g. {policy: DeleteCluster, condition: {jobDeploymentStatus: Failed}} (KubeRay v1.6.0+), " +
			j.nextJobs() + "; kubectl delete raycluster " + j.cluster.rc.Name + " -n " + j.job.Namespace + " now if you are done with it"
	} else if spec.ShutdownAfterJobFinishes {
		ttl := time.Duration(spec.TTLSecondsAfterFinished) * time.Second
		if st.EndTime == nil || finished <= ttl+ix.opts.OperatorGrace {
			return nil // the operator deletes it when the TTL passes
		}
		why = fmt.Sprintf("shutdownAfterJobFinishes is set with ttlSecondsAfterFinished %d, which passed %s ago, but the cluster is still there",
			spec.TTLSecondsAfterFinished, age(finished-ttl))
		if w := ix.jobWarning(j.job); w != nil {
			why += "; the operator reports: " + w.describe(ix.s.Now)
			ev["operatorWarning"] = w.reason
		}
		remedy = "read " + ix.operatorLogs() + " (it deletes the cluster at the TTL); kubectl delete raycluster " + j.cluster.rc.Name + " -n " + j.job.Namespace + " if you are done with it"
	} else {
		why = "neither shutdownAfterJobFinishes nor a deletionStrategy is set, so no KubeRay version deletes the cluster"
		remedy = "set spec.shutdownAfterJobFinishes: true (with spec.ttlSecondsAfterFinished to keep the cluster a while for its logs) " + j.nextJobs() + "; kubectl delete raycluster " +
			j.cluster.rc.Name + " -n " + j.job.Namespace + " now if you are done with it"
	}
	msg := fmt.Sprintf("%s finished (%s)%s and its RayCluster %s still runs %d pod(s): %s", j.what(), st.JobDeploymentStatus, since, j.cluster.rc.Name, live, why)
	return []Finding{j.finding(RuleRayJobFinishedHolds, msg, remedy, ev)}
}

// rulesNeverMatch says why none of a finished RayJob's deletionRules will ever fire ("" when one
// may): KubeRay matches a rule keyed on jobStatus against the RayJob's jobStatus, exactly
// (isDeletionRuleMatched, v1.6.0), and a RayJob that failed before Ray ran its job (a deadline,
// a submission that never started) keeps an empty jobStatus, so rules on SUCCEEDED and FAILED
// alone leave its cluster for good (kuberay #5184, #4233). A rule these API types read with no
// jobStatus is keyed on jobDeploymentStatus (v1.6.0+), which may match: then "".
func rulesNeverMatch(j *rayv1.RayJob) string {
	ds := j.Spec.DeletionStrategy
	if ds == nil || len(ds.DeletionRules) == 0 {
		return ""
	}
	var keyed []string
	for _, r := range ds.DeletionRules {
		st := r.Condition.JobStatus
		if st == nil || *st == "" || *st == j.Status.JobStatus {
			return ""
		}
		if !slices.Contains(keyed, string(*st)) {
			keyed = append(keyed, string(*st))
		}
	}
	return fmt.Sprintf("its deletionRules fire on jobStatus %s only, and its jobStatus is %q (the Ray job never reported one: it ended before Ray ran it), "+
		"so no rule ever deletes the cluster (kuberay #5184)", strings.Join(keyed, ", "), j.Status.JobStatus)
}
