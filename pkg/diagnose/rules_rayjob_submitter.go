package diagnose

import (
	"fmt"
	"sort"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// RuleRayJobSubmitterFailing: a Running RayJob in K8sJobMode whose submitter pod cannot submit:
// it waits on an image or its configuration, crash-loops, is Unschedulable, or earlier attempts
// failed while the Job retries. Every version (v1.1.1, v1.5.0, v1.6.0, createNewK8sJob in
// controllers/ray/rayjob_controller.go) names the submitter Job after the RayJob, puts no label of
// its own on its pods (the Job controller's batch.kubernetes.io/job-name is the only one), runs
// container ray-job-submitter with restartPolicy Never and a backoffLimit of 2 (v1.5.0+:
// spec.submitterConfig.backoffLimit). The operator looks only at the Job's final Failed
// condition (SubmissionFailed, rayjob-failed); until then the RayJob says Running.
const RuleRayJobSubmitterFailing = "rayjob-submitter-failing"

// submitterSelectorMaxNames bounds the `in (...)` list of SubmitterPodSelector; past it, the
// selector asks for every Job pod (a longer URL would be refused by proxies before the API
// server).
const submitterSelectorMaxNames = 100

// submitterJobLabel is the label the Job controller puts on its pods (Kubernetes 1.27+, with the
// older job-name).
const submitterJobLabel = "batch.kubernetes.io/job-name"

// submitterBlocked are the kubelet's waiting reasons for a container that cannot start: a new
// attempt of the Job would wait the same way.
var submitterBlocked = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"CreateContainerConfigError": true, "CreateContainerError": true}

// SubmitterPodSelector is the label selector of the one LIST of submitter pods: the Job pods of
// the RayJobs whose submitter may be at work (K8sJobMode, Initializing or Running), or "" when
// there is none and nothing needs listing.
func SubmitterPodSelector(jobs []rayv1.RayJob) string {
	names := map[string]bool{}
	for i := range jobs {
		if hasSubmitterJob(&jobs[i]) {
			names[jobs[i].Name] = true
		}
	}
	if len(names) == 0 {
		return ""
	}
	if len(names) > submitterSelectorMaxNames {
		return submitterJobLabel
	}
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	sort.Strings(list)
	return submitterJobLabel + " in (" + strings.Join(list, ",") + ")"
}

// hasSubmitterJob: a RayJob whose submitter Job may run now. "" is K8sJobMode, the default.
func hasSubmitterJob(j *rayv1.RayJob) bool {
	mode := j.Spec.SubmissionMode
	st := j.Status.JobDeploymentStatus
	return (mode == "" || mode == rayv1.K8sJobMode) && j.DeletionTimestamp == nil &&
		(st == rayv1.JobDeploymentStatusInitializing || st == rayv1.JobDeploymentStatusRunning)
}

// submitterPods are the pods of the RayJob's submitter Job, oldest first.
func (ix *index) submitterPods(j *rayv1.RayJob) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range ix.s.SubmitterPods {
		p := &ix.s.SubmitterPods[i]
		if p.Namespace == j.Namespace && p.Labels[submitterJobLabel] == j.Name && ownedByJob(p, j.Name) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].CreationTimestamp.Before(&out[b].CreationTimestamp) })
	return out
}

func ownedByJob(p *corev1.Pod, name string) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "Job" && o.Name == name {
			return true
		}
	}
	return false
}

// rayJobSubmitterFailing reports what holds a Running RayJob's submitter, the live pod first
// (what blocks it now), then the attempts that failed, unless a later attempt is Running.
func rayJobSubmitterFailing(ix *index, j *jobView) []Finding {
	if j.job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning || !hasSubmitterJob(j.job) {
		return nil
	}
	var live, failed []*corev1.Pod
	for _, p := range ix.submitterPods(j.job) {
		switch {
		case p.Status.Phase == corev1.PodFailed:
			failed = append(failed, p)
		case ray.Live(p):
			live = append(live, p)
		}
	}
	ns := j.job.Namespace
	ev := jobEvidence(j.job)
	attempts := ""
	if len(failed) > 0 {
		last := failed[len(failed)-1]
		ev["failedAttempts"] = fmt.Sprint(len(failed))
		ev["lastFailedPod"] = last.Name
		attempts = fmt.Sprintf("; %d earlier attempt(s) failed, the last: %s", len(failed), exitOf(last))
	}
	for _, p := range live {
		ev["pod"] = p.Name
		logs := "kubectl describe pod " + p.Name + " -n " + ns
		if cs, w, ok := waitingOn(p, submitterBlocked); ok {
			ev["container"], ev["reason"], ev["image"] = cs.Name, w.Reason, cs.Image
			msg := fmt.Sprintf("%s is Running, but its submitter pod %s cannot start container %s: %s (image %s)%s%s",
				j.what(), p.Name, cs.Name, w.Reason, cs.Image, quoted(w.Message), attempts)
			remedy := "fix spec.submitterPodTemplate (its image, pull secret or the ConfigMaps and Secrets it reads); " + logs +
				" shows the kubelet's events; once the Job's backoffLimit is used up the operator fails the RayJob (SubmissionFailed)"
			return []Finding{j.finding(RuleRayJobSubmitterFailing, msg, remedy, ev)}
		}
		if cs, w, ok := waitingOn(p, map[string]bool{"CrashLoopBackOff": true}); ok {
			ev["container"], ev["reason"], ev["restarts"] = cs.Name, w.Reason, fmt.Sprint(cs.RestartCount)
			msg := fmt.Sprintf("%s is Running, but its submitter pod %s is crash-looping: container %s restarted %d times, last %s%s",
				j.what(), p.Name, cs.Name, cs.RestartCount, terminatedText(cs.LastTerminationState.Terminated), attempts)
			remedy := "read its log: kubectl logs pod/" + p.Name + " -n " + ns + " -c " + cs.Name + " --previous; fix the entrypoint, runtimeEnvYAML or the head's dashboard address (the submitter runs `ray job submit` against it)"
			return []Finding{j.finding(RuleRayJobSubmitterFailing, msg, remedy, ev)}
		}
		if sc := unschedulable(p); sc != nil && ix.s.Now.Sub(pendingSince(p, sc)) > ix.opts.PendingTooLong {
			ev["schedulerMessage"] = sc.Message
			msg := fmt.Sprintf("%s is Running, but its submitter pod %s has been Pending for %s: Unschedulable: %s%s",
				j.what(), p.Name, age(ix.s.Now.Sub(pendingSince(p, sc))), strings.TrimRight(strings.TrimSpace(sc.Message), "."), attempts)
			remedy := "free capacity for spec.submitterPodTemplate's requests, node selector and tolerations (" + logs + "), or lower them"
			return []Finding{j.finding(RuleRayJobSubmitterFailing, msg, remedy, ev)}
		}
	}
	if len(failed) == 0 {
		return nil
	}
	last := failed[len(failed)-1]
	for _, p := range live {
		if p.Status.Phase == corev1.PodRunning && last.CreationTimestamp.Before(&p.CreationTimestamp) {
			// A later attempt runs: the failures may have been passing (the head's dashboard
			// was not up yet). If it fails too, it is a failed attempt on the next run.
			return nil
		}
	}
	delete(ev, "pod")
	now := "the Job retries"
	if len(live) > 0 {
		now = "attempt " + fmt.Sprint(len(failed)+1) + " (pod " + live[0].Name + ") runs"
	}
	msg := fmt.Sprintf("%s is Running, but %d attempt(s) of its submitter failed, the last: pod %s %s; %s until its backoffLimit is used up, then the operator fails the RayJob (SubmissionFailed)",
		j.what(), len(failed), last.Name, exitOf(last), now)
	remedy := "read the failed attempt's log: kubectl logs pod/" + last.Name + " -n " + ns + " -c " + submitterContainer(last) +
		"; fix the entrypoint, runtimeEnvYAML or the head's dashboard address (the submitter runs `ray job submit` against it)"
	return []Finding{j.finding(RuleRayJobSubmitterFailing, msg, remedy, ev)}
}

// waitingOn is the first container of p waiting for one of reasons.
func waitingOn(p *corev1.Pod, reasons map[string]bool) (corev1.ContainerStatus, *corev1.ContainerStateWaiting, bool) {
	for _, statuses := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, cs := range statuses {
			if w := cs.State.Waiting; w != nil && reasons[w.Reason] {
				return cs, w, true
			}
		}
	}
	return corev1.ContainerStatus{}, nil, false
}

// submitterContainer is the name of the failed pod's container that ended in error: KubeRay's
// ray-job-submitter, unless the user's template named it otherwise.
func submitterContainer(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return cs.Name
		}
	}
	if len(p.Status.ContainerStatuses) > 0 {
		return p.Status.ContainerStatuses[0].Name
	}
	return "ray-job-submitter"
}

// exitOf says how a Failed submitter pod ended: its container's exit code and reason, or the
// pod's own reason (a kubelet eviction, a deadline).
func exitOf(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return terminatedText(t)
		}
	}
	if p.Status.Reason != "" {
		return p.Status.Reason + quoted(p.Status.Message)
	}
	return "Failed"
}

// terminatedText is "exited with code 1 (Error)".
func terminatedText(t *corev1.ContainerStateTerminated) string {
	if t == nil {
		return "with no recorded exit"
	}
	s := fmt.Sprintf("exited with code %d", t.ExitCode)
	if t.Reason != "" {
		s += " (" + t.Reason + ")"
	}
	return s
}

// quoted is ": <first line of m>", or "" for an empty message.
func quoted(m string) string {
	if m = strings.TrimSpace(firstLine(m)); m != "" {
		return ": " + m
	}
	return ""
}
