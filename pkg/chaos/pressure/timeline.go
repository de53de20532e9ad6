package pressure

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/report"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Timeline turns what --watch-eviction sees (the target pod, its replacement, its node) into the
// story of the run: injected, pressure seen, evicted, replacement created and Running. It is fed
// by the runner's watches and decides nothing about the API.
type Timeline struct {
	Start     time.Time
	Pod       string // the target pod
	Node      string
	Container string // our ephemeral container
	// Head: the target is a head, so a new head pod of the same cluster is its replacement.
	Head bool

	tl          *timeline.Timeline
	seen        map[string]bool
	evictedAt   time.Time
	replacement string
	cameBack    time.Time
	ended       bool // our container terminated while the pod was not evicted
	exitCode    int32
	exitReason  string
}

func (t *Timeline) note(now time.Time, key string, e timeline.Event, format string, a ...any) {
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	if t.seen[key] {
		return
	}
	t.seen[key] = true
	if t.tl == nil {
		t.tl = &timeline.Timeline{}
	}
	e.At, e.Message = now, fmt.Sprintf(format, a...)
	t.tl.Add(e)
}

// Injected records the start.
func (t *Timeline) Injected() {
	t.note(t.Start, "injected", timeline.Event{Kind: timeline.PressureInjected, Object: t.Container}, "injected %s into pod %s on node %s", t.Container, t.Pod, t.Node)
}

// ObservePod takes a pod from the watch (the target or, for a head, any head of its cluster).
func (t *Timeline) ObservePod(p *corev1.Pod, deleted bool, now time.Time) {
	if p.Name != t.Pod {
		if !t.Head || !ray.IsHead(p) || deleted {
			return
		}
		t.replacement = p.Name
		t.note(now, "created "+p.Name, timeline.Event{Kind: timeline.NewHeadCreated, Object: p.Name}, "replacement head %s created", p.Name)
		if p.Status.Phase == corev1.PodRunning {
			t.note(now, "running "+p.Name, timeline.Event{Kind: timeline.NewHeadRunning, Object: p.Name}, "replacement head %s Running on node %s", p.Name, p.Spec.NodeName)
			if t.cameBack.IsZero() {
				t.cameBack = now
			}
		}
		return
	}
	if deleted {
		t.note(now, "deleted", timeline.Event{Kind: timeline.PodDeleted, Object: p.Name}, "pod %s deleted", p.Name)
		return
	}
	for _, cs := range p.Status.EphemeralContainerStatuses {
		if cs.Name != t.Container {
			continue
		}
		if cs.State.Running != nil {
			t.note(now, "started", timeline.Event{Kind: timeline.PressureStarted, Object: cs.Name}, "%s started", cs.Name)
		}
		if term := cs.State.Terminated; term != nil {
			t.note(now, "exited", timeline.Event{Kind: timeline.PressureExited, Object: cs.Name, Detail: fmt.Sprintf("code %d%s", term.ExitCode, suffix(term.Reason))}, "%s exited with code %d%s", cs.Name, term.ExitCode, suffix(term.Reason))
			if p.Status.Phase == corev1.PodRunning {
				t.ended, t.exitCode, t.exitReason = true, term.ExitCode, term.Reason
			}
		}
	}
	if p.Status.Phase == corev1.PodFailed {
		if p.Status.Reason == "Evicted" {
			t.note(now, "evicted", timeline.Event{Kind: timeline.PodEvicted, Object: p.Name, Detail: strings.TrimSpace(p.Status.Message)}, "pod %s evicted: %s", p.Name, strings.TrimSpace(p.Status.Message))
		} else {
			t.note(now, "evicted", timeline.Event{Kind: timeline.PodEvicted, Object: p.Name, Detail: "Failed" + suffix(p.Status.Reason)}, "pod %s Failed%s", p.Name, suffix(p.Status.Reason))
		}
		if t.evictedAt.IsZero() {
			t.evictedAt = now
		}
	}
}

// ObserveNode takes the target's node from the watch.
func (t *Timeline) ObserveNode(n *corev1.Node, now time.Time) {
	for _, c := range n.Status.Conditions {
		if strings.HasSuffix(string(c.Type), "Pressure") && c.Status == corev1.ConditionTrue {
			t.note(now, "cond "+string(c.Type), timeline.Event{Kind: timeline.NodePressure, Object: n.Name, Detail: string(c.Type)}, "pressure seen on node %s: %s=True%s", n.Name, c.Type, suffix(c.Message))
		}
	}
	for _, taint := range n.Spec.Taints {
		if strings.HasPrefix(taint.Key, "node.kubernetes.io/") && strings.HasSuffix(taint.Key, "-pressure") {
			t.note(now, "taint "+taint.Key, timeline.Event{Kind: timeline.NodeTainted, Object: n.Name, Detail: taint.Key + ":" + string(taint.Effect)}, "node %s tainted %s:%s", n.Name, taint.Key, taint.Effect)
		}
	}
}

// Done reports whether nothing more is worth waiting for.
func (t *Timeline) Done() bool {
	if !t.cameBack.IsZero() || t.ended {
		return true
	}
	return !t.Head && (!t.evictedAt.IsZero() || t.seen["deleted"])
}

// Events are the events so far, oldest first.
func (t *Timeline) Events() []timeline.Event { return t.tl.Events() }

// Lines are the events as --watch-eviction prints them.
func (t *Timeline) Lines() []string {
	var out []string
	for _, e := range t.Events() {
		out = append(out, Line(t.Start, e))
	}
	return out
}

// Line is one event as --watch-eviction prints it: the time since the injection, then the words.
func Line(start time.Time, e timeline.Event) string {
	return fmt.Sprintf("%6s  %s", "+"+e.At.Sub(start).Round(time.Second).String(), e.Message)
}

// Verdict is the last line, and whether the run ended well: a head that was evicted and not
// replaced within the timeout is the failure seed 000 describes.
func (t *Timeline) Verdict(timeout time.Duration) (string, bool) {
	v := t.result(timeout)
	return v.Message, v.Passed
}

func (t *Timeline) result(timeout time.Duration) report.PressureVerdict {
	v := func(passed bool, outcome, format string, a ...any) report.PressureVerdict {
		return report.PressureVerdict{Passed: passed, Outcome: outcome, Message: fmt.Sprintf(format, a...)}
	}
	switch {
	case !t.cameBack.IsZero():
		return v(true, report.OutcomeCameBack, "the cluster came back: head %s Running %s after the eviction", t.replacement, t.cameBack.Sub(t.evictedAt).Round(time.Second))
	case !t.evictedAt.IsZero() && t.Head:
		return v(false, report.OutcomeNotReplaced, "the cluster did not come back within %s: evicted head %s was not replaced (KubeRay before v1.2.0 never replaces it; see kubectl ray doctor and kubectl ray heal)", timeout, t.Pod)
	case !t.evictedAt.IsZero():
		return v(true, report.OutcomeEvicted, "pod %s was evicted", t.Pod)
	case t.ended && t.exitCode != 0:
		// The script refused (not enough free space, no shared process namespace) or failed
		// (dd, the fill deadline): the pressure asked for never happened, which is no result.
		return v(false, report.OutcomePressureFailed, "the pressure did not run as asked: %s exited with code %d%s and pod %s is still Running; its log says why: kubectl logs %s -c %s",
			t.Container, t.exitCode, suffix(t.exitReason), t.Pod, t.Pod, t.Container)
	case t.ended:
		return v(true, report.OutcomeNoEvictionEnded, "no eviction: %s ended and pod %s is still Running", t.Container, t.Pod)
	case !t.seen["started"]:
		return v(false, report.OutcomeNeverStarted, "the pressure never started: %s did not run within %s (an image that cannot be pulled? see kubectl describe pod %s)", t.Container, timeout, t.Pod)
	}
	return v(true, report.OutcomeNoEvictionInTime, "no eviction within %s", timeout)
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
