package diagnose

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/flagname"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// headPodRules judge each head pod on its own: terminal, stuck terminating, crash-looping, pending.
func headPodRules(ix *index, c *clusterView) []Finding {
	var out []Finding
	for _, p := range c.heads {
		if f, ok := headTerminatingStuck(ix, c, p); ok {
			if _, off := ix.restartDisabled(c); off && f.Facts.NodeDown {
				// heal never acts here: no new head would follow (head-restart-disabled).
				f.Remedy = "head restart is disabled on this cluster by design, so no new head follows; to clean up, force-delete it once you know the node is down: kubectl delete pod " +
					p.Name + " -n " + p.Namespace + " --grace-period=0 --force"
			}
			out = append(out, f)
			continue
		}
		if p.DeletionTimestamp != nil {
			// Being deleted within its grace period: whatever state it is in is on its way out.
			continue
		}
		switch p.Status.Phase {
		case corev1.PodFailed, corev1.PodSucceeded:
			if _, off := ix.restartDisabled(c); !off { // else head-restart-disabled says it: heal must not
				out = append(out, headTerminal(ix, c, p))
			}
			continue
		}
		if f, ok := headImagePull(c, p); ok {
			out = append(out, f)
			continue
		}
		if f, ok := headCrashLoop(ix, c, p); ok {
			out = append(out, f)
			continue
		}
		if f, ok := headPending(ix, c, p); ok {
			out = append(out, headStarved(c, p, f))
		}
	}
	return out
}

func healCmd(c *clusterView) string {
	return fmt.Sprintf("kubectl ray heal %s -n %s", c.rc.Name, c.rc.Namespace)
}

// headTerminal is head-evicted or head-terminated. A pod in phase Failed or Succeeded never runs
// again; whether anything replaces it depends on the operator version and the restartPolicy.
func headTerminal(ix *index, c *clusterView, p *corev1.Pod) Finding {
	now := ix.s.Now
	since := failedAt(p)
	ev := map[string]string{
		"pod": p.Name, "node": p.Spec.NodeName, "phase": string(p.Status.Phase),
		"age": age(now.Sub(since)), "restartPolicy": string(restartPolicy(p)),
	}
	rule := RuleHeadTerminated
	var what string
	if msg, evicted := ray.KubeletEviction(p); evicted {
		// Failed/Evicted, or Succeeded when the containers exited 0 on SIGTERM: the kubelet's
		// DisruptionTarget condition says eviction either way.
		rule = RuleHeadEvicted
		what = fmt.Sprintf("head pod %s was evicted from node %s %s ago", p.Name, orNone(p.Spec.NodeName), age(now.Sub(since)))
		if p.Status.Phase != corev1.PodFailed {
			what = fmt.Sprintf("head pod %s was evicted from node %s %s ago (phase %s)", p.Name, orNone(p.Spec.NodeName), age(now.Sub(since)), p.Status.Phase)
		}
		ev["reason"] = "Evicted"
		if m := strings.TrimRight(strings.TrimSpace(msg), "."); m != "" {
			what += ": " + m
			ev["kubeletMessage"] = m
		}
	} else {
		what = fmt.Sprintf("head pod %s on node %s is %s", p.Name, orNone(p.Spec.NodeName), p.Status.Phase)
		if p.Status.Reason != "" {
			what += " (" + p.Status.Reason + ")"
			ev["reason"] = p.Status.Reason
		}
		if t := lastTermination(p); t != nil {
			what += fmt.Sprintf(", container exited %d (%s)", t.ExitCode, orNone(t.Reason))
			ev["exitCode"] = fmt.Sprint(t.ExitCode)
		}
		what += fmt.Sprintf(" since %s ago", age(now.Sub(since)))
	}
	verdict, op := ix.operatorVerdict()
	ev["operator"] = op
	facts := Facts{Operator: op}
	heal := healCmd(c)
	var why, remedy string
	switch {
	case restartPolicy(p) != corev1.RestartPolicyAlways && verdict != opAbsent && verdict != opUnknown:
		// Every KubeRay release deletes and recreates a terminal head whose restartPolicy is not Always.
		why, remedy = overdue(ix, since, op), "if it is still there after "+age(ix.opts.OperatorGrace)+", read "+ix.operatorLogs()+"; `"+heal+"` replaces the head"
		remedy = withinGrace(ix, since, op, ev, &facts, remedy)
	case verdict == opAbsent:
		why = "nothing will replace it: " + op + " was found"
		remedy = "start the KubeRay operator, or run `" + heal + "` and have it replace the head once the operator runs"
	case verdict == opBuggy:
		why = op + " will not replace it: it skips Failed heads with restartPolicy Always (kuberay #2125, fixed in v" + ray.FixedEvictedHeadVersion.String() + ")"
		remedy = "run `" + heal + "` (or: kubectl delete pod " + p.Name + " -n " + p.Namespace + "); upgrade KubeRay to v" + ray.FixedEvictedHeadVersion.String() + "+"
	case verdict == opUnknown:
		why = op + " may not replace it: releases before v" + ray.FixedEvictedHeadVersion.String() + " skip Failed heads with restartPolicy Always (kuberay #2125)"
		remedy = "run `" + heal + "` (or: kubectl delete pod " + p.Name + " -n " + p.Namespace + ")"
	default:
		why, remedy = overdue(ix, since, op), "read "+ix.operatorLogs()+"; `"+heal+"` replaces the head"
		remedy = withinGrace(ix, since, op, ev, &facts, remedy)
	}
	f := c.finding(rule, state.PodRef(p), what+"; "+why, remedy, ev)
	f.Facts = facts
	return f
}

// withinGrace: while the operator still has its grace to replace the head it deletes it itself
// (shouldDeletePod), so nobody should be told to heal it, and heal must not race the operator:
// facts.OperatorReplacesBy tells heal until when the head is the operator's to replace (evidence
// operatorReplacesBy says it in words).
func withinGrace(ix *index, since time.Time, op string, ev map[string]string, facts *Facts, late string) string {
	due := since.Add(ix.opts.OperatorGrace)
	if !ix.s.Now.Before(due) {
		return late
	}
	ev[EvidenceOperatorReplacesBy] = due.UTC().Format(time.RFC3339)
	facts.OperatorReplacesBy = due
	return "nothing to do yet: " + op + " deletes this head and creates a new one; if it is still there after " +
		due.UTC().Format(time.RFC3339) + ", run kubectl ray doctor again"
}

// EvidenceOperatorReplacesBy is the evidence key (RFC 3339) until which a terminal head is the
// operator's to replace (Facts.OperatorReplacesBy, which heal reads).
const EvidenceOperatorReplacesBy = "operatorReplacesBy"

// ReplaceDeadline is the earliest time after s.Now at which the operator's grace for a terminal
// head or worker of s ends: then head-evicted, head-terminated and worker-failed start advising
// heal, with no object changing. A watchdog examines the cluster again at that time.
func ReplaceDeadline(s *state.Snapshot, o Options) (at time.Time, ok bool) {
	o = o.withDefaults()
	for i := range s.Pods {
		p := &s.Pods[i]
		if !isRayPod(p) || !ray.Terminal(p) {
			continue
		}
		if t := failedAt(p).Add(o.OperatorGrace); t.After(s.Now) && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	return at, !at.IsZero()
}

// overdue says whether an operator that does replace terminal heads is late doing so.
func overdue(ix *index, since time.Time, op string) string {
	late := ix.s.Now.Sub(since) - ix.opts.OperatorGrace
	if late <= 0 {
		return op + " should replace it within " + age(ix.opts.OperatorGrace)
	}
	return fmt.Sprintf("%s should have replaced it within %s, so the operator is not reconciling this cluster", op, age(ix.opts.OperatorGrace))
}

func restartPolicy(p *corev1.Pod) corev1.RestartPolicy {
	if p.Spec.RestartPolicy == "" {
		return corev1.RestartPolicyAlways
	}
	return p.Spec.RestartPolicy
}

func lastTermination(p *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			return t
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// headTerminatingStuck: deletionTimestamp is when the grace period ends; a pod still there a
// margin later is held by a kubelet that cannot confirm the kill (node down) or a finalizer.
func headTerminatingStuck(ix *index, c *clusterView, p *corev1.Pod) (Finding, bool) {
	if p.DeletionTimestamp == nil {
		return Finding{}, false
	}
	over := ix.s.Now.Sub(p.DeletionTimestamp.Time)
	if over <= ix.opts.TerminatingMargin {
		return Finding{}, false
	}
	ev := map[string]string{"pod": p.Name, "node": p.Spec.NodeName, "age": age(over),
		"deletionTimestamp": p.DeletionTimestamp.UTC().Format(time.RFC3339)}
	msg := fmt.Sprintf("head pod %s has been terminating %s past its grace period", p.Name, age(over))
	remedy := "find out why the kubelet on " + orNone(p.Spec.NodeName) + " does not finish the deletion"
	nodeState := ""
	switch n, seen := ix.nodes[p.Spec.NodeName]; {
	case !ix.s.CanSee("nodes") || p.Spec.NodeName == "":
	case !seen:
		nodeState = "gone"
	default:
		var parts []string
		// Only a node shown to be down makes --force the remedy; see ray.NodeReadiness.
		if r := ray.NodeReadiness(n); ray.NodeDown(r) {
			parts = append(parts, r)
		}
		if n.Spec.Unschedulable {
			parts = append(parts, "cordoned")
		}
		nodeState = strings.Join(parts, ", ")
	}
	nodeDown := nodeState != "" && nodeState != "cordoned"
	if nodeState != "" {
		ev["nodeState"] = nodeState
		msg += fmt.Sprintf("; its node %s is %s", p.Spec.NodeName, nodeState)
		if nodeDown {
			remedy = "the kubelet cannot confirm the kill, so the operator keeps counting this pod as the head (kuberay #4078): `" +
				healCmd(c) + " " + flagname.Flag(flagname.Force) + "` (or: kubectl delete pod " + p.Name + " -n " + p.Namespace + " --grace-period=0 --force)"
		}
	}
	if len(p.Finalizers) > 0 {
		ev["finalizers"] = strings.Join(p.Finalizers, ",")
		msg += "; finalizers " + ev["finalizers"]
		if nodeState == "" || nodeState == "cordoned" {
			remedy = "the pod waits for its finalizers (" + ev["finalizers"] + "): check the controller that owns them"
		}
	}
	f := c.finding(RuleHeadTerminatingStuck, state.PodRef(p), msg, remedy, ev)
	f.Facts.NodeDown = nodeDown
	return f, true
}

// Container waiting reasons that mean the container will not start without a change. An image
// that cannot be pulled is image-pull-failed's (pullReasons).
var stuckWaiting = map[string]bool{
	"CrashLoopBackOff": true, "CreateContainerConfigError": true, "CreateContainerError": true,
}

// crash is a container that keeps dying or cannot start: waiting with a stuckWaiting reason
// (waiting set), or OOMKilled and not Ready again or recently (waiting nil). oom is its OOM kill,
// if any.
type crash struct {
	cs      corev1.ContainerStatus
	waiting *corev1.ContainerStateWaiting
	oom     *corev1.ContainerStateTerminated
}

// crashLooping is the first of statuses that keeps dying or cannot start.
func crashLooping(ix *index, statuses []corev1.ContainerStatus) (crash, bool) {
	for _, cs := range statuses {
		oom := cs.LastTerminationState.Terminated
		if oom != nil && oom.Reason != "OOMKilled" {
			oom = nil
		}
		if t := cs.State.Terminated; t != nil && t.Reason == "OOMKilled" {
			oom = t
		}
		if w := cs.State.Waiting; w != nil && stuckWaiting[w.Reason] {
			return crash{cs: cs, waiting: w, oom: oom}, true
		}
		if oom != nil && (!cs.Ready || ix.s.Now.Sub(oom.FinishedAt.Time) < ix.opts.RecentOOM) {
			return crash{cs: cs, oom: oom}, true
		}
	}
	return crash{}, false
}

// headCrashLoop reports a head container that keeps dying or cannot start. Waiting messages are
// not quoted: for CreateContainerConfigError they name secrets.
func headCrashLoop(ix *index, c *clusterView, p *corev1.Pod) (Finding, bool) {
	statuses := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	cr, ok := crashLooping(ix, statuses)
	if !ok {
		return Finding{}, false
	}
	cs, oom := cr.cs, cr.oom
	ev := map[string]string{"pod": p.Name, "node": p.Spec.NodeName, "container": cs.Name, "restarts": fmt.Sprint(cs.RestartCount)}
	if w := cr.waiting; w != nil {
		ev["reason"] = w.Reason
		msg := fmt.Sprintf("head pod %s container %s is %s (%d restarts)", p.Name, cs.Name, w.Reason, cs.RestartCount)
		remedy := "read its logs: kubectl logs " + p.Name + " -n " + p.Namespace + " -c " + cs.Name + " --previous; fix the head's configuration in the RayCluster"
		switch w.Reason {
		case "CreateContainerConfigError", "CreateContainerError":
			remedy = "a ConfigMap, Secret or volume the head container needs is missing: kubectl describe pod " + p.Name + " -n " + p.Namespace
		}
		if oom != nil {
			ev["lastState"] = "OOMKilled"
			msg += "; last exit OOMKilled"
			remedy = "the head ran out of memory: raise headGroupSpec's memory limit (and keep object-store-memory below it)"
		}
		return c.finding(RuleHeadCrashLoop, state.PodRef(p), msg, remedy, ev), true
	}
	ev["lastState"] = "OOMKilled"
	ev["exitCode"] = fmt.Sprint(oom.ExitCode)
	ev["age"] = age(ix.s.Now.Sub(oom.FinishedAt.Time))
	msg := fmt.Sprintf("head pod %s container %s was OOMKilled %s ago (%d restarts)", p.Name, cs.Name, ev["age"], cs.RestartCount)
	return c.finding(RuleHeadCrashLoop, state.PodRef(p), msg,
		"the head ran out of memory: raise headGroupSpec's memory limit (and keep object-store-memory below it)", ev), true
}

// headPending: the scheduler said no, or the pod has waited too long for any reason.
func headPending(ix *index, c *clusterView, p *corev1.Pod) (Finding, bool) {
	if p.Status.Phase != corev1.PodPending {
		return Finding{}, false
	}
	waited := ix.s.Now.Sub(p.CreationTimestamp.Time)
	ev := map[string]string{"pod": p.Name, "age": age(waited)}
	if sc := podCondition(p, corev1.PodScheduled); sc != nil && sc.Status == corev1.ConditionFalse && sc.Reason == corev1.PodReasonUnschedulable {
		ev["reason"] = sc.Reason
		ev["schedulerMessage"] = sc.Message
		msg := fmt.Sprintf("head pod %s is Pending for %s: Unschedulable: %s", p.Name, age(waited), sc.Message)
		remedy := "free or add capacity that matches the head's requests, node selector, affinity and tolerations; kubectl describe pod " + p.Name + " -n " + p.Namespace
		if claim, fix, ok := gcsStoreUnschedulable(c, p, sc.Message); ok {
			ev["gcsStoreClaim"] = claim
			msg += " (PVC " + claim + " holds the head's RocksDB GCS store)"
			remedy = fix
		}
		return c.finding(RuleHeadPending, state.PodRef(p), msg, remedy, ev), true
	}
	if waited <= ix.opts.PendingTooLong {
		return Finding{}, false
	}
	ev["node"] = p.Spec.NodeName
	msg := fmt.Sprintf("head pod %s has been Pending for %s (longer than %s)", p.Name, age(waited), age(ix.opts.PendingTooLong))
	if p.Spec.NodeName != "" {
		msg += " on node " + p.Spec.NodeName
	}
	return c.finding(RuleHeadPending, state.PodRef(p), msg,
		"see what it waits for (volumes, image pull, init containers): kubectl describe pod "+p.Name+" -n "+p.Namespace, ev), true
}
