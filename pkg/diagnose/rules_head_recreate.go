package diagnose

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleHeadRecreateLoop: the head fails soon after each start and is deleted and created again,
// by the operator or by heal, over and over (kuberay #4272). Deleting it once more is no repair.
const RuleHeadRecreateLoop = "head-recreate-loop"

// clusterEvents are the kept Events about c (KeepEvent): of this RayCluster by name and, when
// both carry one, by UID (a RayCluster deleted and created again under its name starts afresh).
func (ix *index) clusterEvents(c *clusterView) []*corev1.Event {
	if ix.headEvents == nil {
		ix.headEvents = map[string][]*corev1.Event{}
		for i := range ix.s.Events {
			ev := &ix.s.Events[i]
			if ev.InvolvedObject.Kind != "RayCluster" || !KeepEvent(ev) {
				continue
			}
			k := key(ev.InvolvedObject.Namespace, ev.InvolvedObject.Name)
			ix.headEvents[k] = append(ix.headEvents[k], ev)
		}
	}
	var out []*corev1.Event
	for _, ev := range ix.headEvents[key(c.rc.Namespace, c.rc.Name)] {
		if ev.InvolvedObject.UID != "" && c.rc.UID != "" && ev.InvolvedObject.UID != c.rc.UID {
			continue
		}
		out = append(out, ev)
	}
	return out
}

// headRecreateLoop counts head deletions within RecreateLoopWindow. With RecreateLoopHeads or
// more, and no head that has been Running and Ready for RecreateLoopSettled, the cluster is in a
// loop. The age of the current head is the second signal: a loop that ended has a settled head.
func headRecreateLoop(ix *index, c *clusterView) []Finding {
	if !ix.s.CanSee("events") {
		return nil
	}
	now, o := ix.s.Now, ix.opts
	from := now.Add(-o.RecreateLoopWindow)
	type deletion struct {
		at  time.Time
		by  string
		msg string
	}
	var dels []deletion
	for _, ev := range ix.clusterEvents(c) {
		first, last := eventTimes(ev)
		if last.Before(from) {
			continue
		}
		// An aggregated Event (count > 1) first seen before the window counts once: only its
		// last observation is known to be inside.
		n := eventCount(ev)
		if first.Before(from) {
			n = 1
		}
		if d, by := headDeleted(ev); d {
			for i := 0; i < n; i++ {
				dels = append(dels, deletion{at: last, by: by, msg: ev.Message})
			}
		}
	}
	if len(dels) < o.RecreateLoopHeads {
		return nil
	}
	var current *corev1.Pod
	for _, h := range c.liveHeads() {
		if current == nil || h.CreationTimestamp.After(current.CreationTimestamp.Time) {
			current = h
		}
	}
	if current != nil && ray.RunningReady(current) {
		if rc := podCondition(current, corev1.PodReady); rc != nil && now.Sub(rc.LastTransitionTime.Time) >= o.RecreateLoopSettled {
			return nil // the loop ended: this head has held
		}
	}
	sort.Slice(dels, func(i, j int) bool { return dels[i].at.Before(dels[j].at) })
	span := now.Sub(dels[0].at)
	byOp, byHeal := 0, 0
	for _, d := range dels {
		if d.by == "heal" {
			byHeal++
		} else {
			byOp++
		}
	}
	ev := map[string]string{
		"deletions": fmt.Sprint(len(dels)), "window": age(span), "byOperator": fmt.Sprint(byOp), "byHeal": fmt.Sprint(byHeal),
		"lastDeleted": age(now.Sub(dels[len(dels)-1].at)) + " ago",
	}
	msg := fmt.Sprintf("the head of %s was deleted and recreated %d times in the last %s (%d by the operator, %d by heal)",
		c.what(), len(dels), age(span), byOp, byHeal)
	loop := &RecreateLoop{Deletions: len(dels), Window: span}
	code, reason, seen := lastExit(current)
	if !seen {
		code, reason, seen = exitFromMessage(dels[len(dels)-1].msg)
	}
	if seen {
		loop.LastExit = &Exit{Code: code, Reason: reason}
		ev["lastExitCode"] = fmt.Sprint(code)
		ev["lastReason"] = reason
		msg += fmt.Sprintf("; last exit %d (%s)", code, orNone(reason))
	}
	obj := state.ClusterRef(c.rc)
	if current != nil {
		obj = state.PodRef(current)
		ev["head"] = current.Name
		ev["headAge"] = age(now.Sub(current.CreationTimestamp.Time))
		ev["headPhase"] = string(current.Status.Phase)
		msg += fmt.Sprintf("; current head %s is %s old, %s", current.Name, ev["headAge"], headState(current))
	} else {
		msg += "; no head pod now"
	}
	remedy := "the head fails soon after each start, so deleting it again only adds a turn (kuberay #4272): read why it stopped " +
		"(kubectl get events -n " + c.rc.Namespace + " --field-selector involvedObject.name=" + c.rc.Name
	if current != nil {
		remedy += "; kubectl logs " + current.Name + " -n " + current.Namespace + " --previous"
	}
	remedy += ") and fix the head's configuration (memory, command, probes, image); `kubectl ray heal` backs off on this cluster"
	f := c.finding(RuleHeadRecreateLoop, obj, msg, remedy, ev)
	f.Facts.Loop = loop
	if current != nil {
		f.Facts.Head = current.Name
	}
	return []Finding{f}
}

// lastExit is the most recent termination of any of p's containers.
func lastExit(p *corev1.Pod) (code int, reason string, ok bool) {
	if p == nil {
		return 0, "", false
	}
	var best *corev1.ContainerStateTerminated
	for _, cs := range p.Status.ContainerStatuses {
		for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
			if t != nil && (best == nil || t.FinishedAt.After(best.FinishedAt.Time)) {
				best = t
			}
		}
	}
	if best == nil {
		return 0, "", false
	}
	return int(best.ExitCode), best.Reason, true
}

// headState is how a head reads in the loop's message: "Running, Ready", "Failed (Evicted)", ...
func headState(p *corev1.Pod) string {
	s := string(p.Status.Phase)
	if s == "" {
		s = "in no phase yet"
	}
	if p.Status.Reason != "" {
		s += " (" + p.Status.Reason + ")"
	}
	if p.Status.Phase == corev1.PodRunning {
		if podutils.IsPodReady(p) {
			s += ", Ready"
		} else {
			s += ", not Ready"
		}
	}
	return s
}
