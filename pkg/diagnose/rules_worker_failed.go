package diagnose

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleWorkerFailed: worker pods in phase Failed or Succeeded, which never run again. The kubelet
// fails a pod for many reasons (eviction for node pressure, admission failures such as
// UnexpectedAdmissionError or OutOfcpu, a graceful node shutdown), and KubeRay reads none of them:
// its shouldDeletePod looks only at the phase, the restartPolicy and the Ray container.
//   - v1.1.1 never deletes a terminal worker whose restartPolicy is Always (the Kubernetes default,
//     which KubeRay leaves in place), and it still counts it among the group's replicas, so no new
//     worker is created: the group stays short for good (kuberay #2125, as for heads).
//   - v1.2.0 and later (v1.5.0, v1.6.0 read) delete every terminal worker and create a new one on
//     the next reconcile; a terminal worker left past the operator's grace means the operator is
//     not reconciling the cluster.
const RuleWorkerFailed = "worker-failed"

// workerFailed reports, per worker group, the terminal workers nothing will replace, or that the
// operator should have replaced already. Workers the operator still has its grace to replace are
// left to it, as for heads.
func workerFailed(ix *index, c *clusterView) []Finding {
	if c.rc.DeletionTimestamp != nil || c.suspended() {
		return nil // the operator deletes every pod of the cluster on purpose
	}
	groups := map[string][]*corev1.Pod{}
	for _, w := range c.workers {
		if w.DeletionTimestamp == nil && ray.Terminal(w) {
			groups[w.Labels[ray.LabelGroup]] = append(groups[w.Labels[ray.LabelGroup]], w)
		}
	}
	if len(groups) == 0 {
		return nil
	}
	verdict, op := ix.operatorVerdict()
	var out []Finding
	for _, group := range sortedKeys(groups) {
		if f, ok := workerGroupFailed(ix, c, group, groups[group], verdict, op); ok {
			out = append(out, f)
		}
	}
	return out
}

func workerGroupFailed(ix *index, c *clusterView, group string, failed []*corev1.Pod, verdict operatorState, op string) (Finding, bool) {
	now := ix.s.Now
	sort.Slice(failed, func(i, j int) bool { return failed[i].Name < failed[j].Name })
	// The operator replaces a terminal worker unless it is v1.1.1-like and the pod's
	// restartPolicy is Always. An absent operator replaces nothing; an unknown one may not.
	neverReplaced := func(p *corev1.Pod) bool {
		return verdict == opAbsent || verdict == opUnknown || verdict == opBuggy && restartPolicy(p) == corev1.RestartPolicyAlways
	}
	var report []*corev1.Pod
	var oldest time.Time
	for _, p := range failed {
		since := failedAt(p)
		if !neverReplaced(p) && now.Sub(since) < ix.opts.OperatorGrace {
			continue // the operator's to replace, within its grace
		}
		report = append(report, p)
		if oldest.IsZero() || since.Before(oldest) {
			oldest = since
		}
	}
	if len(report) == 0 {
		return Finding{}, false
	}
	running, desired := groupCounts(c, group)
	var names, states, refs []string
	var podRefs []state.Ref
	for _, p := range report {
		names = append(names, p.Name)
		states = append(states, p.Name+" ("+failedState(p)+")")
		podRefs = append(podRefs, state.PodRef(p))
		refs = append(refs, p.Name)
	}
	ev := map[string]string{
		"group": group, "workers": strings.Join(names, ","), "failed": fmt.Sprint(len(report)),
		"running": fmt.Sprintf("%d/%s", running, desired), "age": age(now.Sub(oldest)), "operator": op,
	}
	msg := fmt.Sprintf("%d worker pod(s) of group %s are terminal and never run again: %s; the group runs %d of %s desired workers",
		len(report), group, strings.Join(states, ", "), running, desired)
	heal := healCmd(c)
	byHand := "kubectl delete pod " + strings.Join(refs, " ") + " -n " + c.rc.Namespace
	var remedy string
	switch {
	case verdict == opAbsent:
		msg += "; nothing will replace them: " + op + " was found"
		remedy = "start the KubeRay operator, or run `" + heal + "` and have it replace them once the operator runs"
	case verdict == opUnknown:
		msg += "; " + op + " may not replace them: releases before v" + ray.FixedEvictedHeadVersion.String() +
			" skip terminal pods with restartPolicy Always and still count them as the group's workers (kuberay #2125)"
		remedy = "run `" + heal + "` (or: " + byHand + "); the operator then creates new workers"
	case verdict == opBuggy && neverReplaced(report[0]):
		msg += "; " + op + " will not replace them: it skips terminal pods with restartPolicy Always and still counts them " +
			"as the group's workers, so it creates no new ones (kuberay #2125, fixed in v" + ray.FixedEvictedHeadVersion.String() + ")"
		remedy = "run `" + heal + "` (or: " + byHand + "); the operator then creates new workers; upgrade KubeRay to v" + ray.FixedEvictedHeadVersion.
			String() + "+"
	default:
		msg += "; " + overdueWorkers(ix, oldest, op)
		remedy = "read " + ix.operatorLogs() + "; `" + heal + "` replaces them"
	}
	f := c.finding(RuleWorkerFailed, state.ClusterRef(c.rc), msg, remedy, ev)
	f.Facts.Operator, f.Facts.Pods = op, podRefs
	return f, true
}

// overdueWorkers: an operator that replaces terminal workers is past its grace.
func overdueWorkers(ix *index, since time.Time, op string) string {
	return fmt.Sprintf("%s should have replaced them within %s, so the operator is not reconciling this cluster", op, age(ix.opts.OperatorGrace))
}

// failedState is how a terminal pod ended, in the kubelet's words: "Evicted: The node was low on
// resource: memory", "OutOfcpu: Node didn't have enough resource: cpu", or the phase.
func failedState(p *corev1.Pod) string {
	if msg, evicted := ray.KubeletEviction(p); evicted {
		return "Evicted: " + firstSentence(msg)
	}
	s := string(p.Status.Phase)
	if p.Status.Reason != "" {
		s = p.Status.Reason
	}
	if m := firstSentence(p.Status.Message); m != "" {
		s += ": " + m
	}
	if t := lastTermination(p); t != nil && p.Status.Reason == "" {
		s += fmt.Sprintf(", container exited %d (%s)", t.ExitCode, orNone(t.Reason))
	}
	return s
}

// firstSentence is the first sentence of a kubelet message, without its period.
func firstSentence(msg string) string {
	first, _, _ := strings.Cut(firstLine(strings.TrimSpace(msg)), ". ")
	return strings.TrimRight(first, ". ")
}

// groupCounts are the group's Running workers and its desired replicas as the spec says them
// ("?" for a group the spec no longer has).
func groupCounts(c *clusterView, group string) (running int, desired string) {
	for _, w := range c.workers {
		if w.Labels[ray.LabelGroup] == group && ray.Running(w) {
			running++
		}
	}
	desired = "?"
	for i := range c.rc.Spec.WorkerGroupSpecs {
		if g := &c.rc.Spec.WorkerGroupSpecs[i]; g.GroupName == group {
			desired = fmt.Sprint(desiredPods(g))
		}
	}
	return running, desired
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
