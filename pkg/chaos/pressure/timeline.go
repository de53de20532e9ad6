package pressure

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Timeline turns what --watch-eviction sees (the target pod, its replacement, its node) into the
// story of the run: injected, pressure seen, evicted, replacement created and Running. It is fed
// by the command's watches and decides nothing about the API.
type Timeline struct {
	Start     time.Time
	Pod       string // the target pod
	Node      string
	Container string // our ephemeral container
	// Head: the target is a head, so a new head pod of the same cluster is its replacement.
	Head bool

	events      []string
	seen        map[string]bool
	evictedAt   time.Time
	replacement string
	cameBack    time.Time
	ended       bool // our container terminated while the pod was not evicted
	exitCode    int32
	exitReason  string
}

func (t *Timeline) note(now time.Time, key, format string, a ...any) {
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	if t.seen[key] {
		return
	}
	t.seen[key] = true
	t.events = append(t.events, fmt.Sprintf("%6s  %s", "+"+now.Sub(t.Start).Round(time.Second).String(), fmt.Sprintf(format, a...)))
}

// Injected records the start.
func (t *Timeline) Injected() {
	t.note(t.Start, "injected", "injected %s into pod %s on node %s", t.Container, t.Pod, t.Node)
}

// ObservePod takes a pod from the watch (the target or, for a head, any head of its cluster).
func (t *Timeline) ObservePod(p *corev1.Pod, deleted bool, now time.Time) {
	if p.Name != t.Pod {
		if !t.Head || p.Labels[LabelNodeType] != "head" || deleted {
			return
		}
		t.replacement = p.Name
		t.note(now, "created "+p.Name, "replacement head %s created", p.Name)
		if p.Status.Phase == corev1.PodRunning {
			t.note(now, "running "+p.Name, "replacement head %s Running on node %s", p.Name, p.Spec.NodeName)
			if t.cameBack.IsZero() {
				t.cameBack = now
			}
		}
		return
	}
	if deleted {
		t.note(now, "deleted", "pod %s deleted", p.Name)
		return
	}
	for _, cs := range p.Status.EphemeralContainerStatuses {
		if cs.Name != t.Container {
			continue
		}
		if cs.State.Running != nil {
			t.note(now, "started", "%s started", cs.Name)
		}
		if term := cs.State.Terminated; term != nil {
			t.note(now, "exited", "%s exited with code %d%s", cs.Name, term.ExitCode, suffix(term.Reason))
			if p.Status.Phase == corev1.PodRunning {
				t.ended, t.exitCode, t.exitReason = true, term.ExitCode, term.Reason
			}
		}
	}
	if p.Status.Phase == corev1.PodFailed {
		if p.Status.Reason == "Evicted" {
			t.note(now, "evicted", "pod %s evicted: %s", p.Name, strings.TrimSpace(p.Status.Message))
		} else {
			t.note(now, "evicted", "pod %s Failed%s", p.Name, suffix(p.Status.Reason))
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
			t.note(now, "cond "+string(c.Type), "pressure seen on node %s: %s=True%s", n.Name, c.Type, suffix(c.Message))
		}
	}
	for _, taint := range n.Spec.Taints {
		if strings.HasPrefix(taint.Key, "node.kubernetes.io/") && strings.HasSuffix(taint.Key, "-pressure") {
			t.note(now, "taint "+taint.Key, "node %s tainted %s:%s", n.Name, taint.Key, taint.Effect)
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

// Events are the lines so far, oldest first.
func (t *Timeline) Events() []string { return t.events }

// Verdict is the last line, and whether the run ended well: a head that was evicted and not
// replaced within the timeout is the failure seed 000 describes.
func (t *Timeline) Verdict(timeout time.Duration) (string, bool) {
	switch {
	case !t.cameBack.IsZero():
		return fmt.Sprintf("the cluster came back: head %s Running %s after the eviction", t.replacement, t.cameBack.Sub(t.evictedAt).Round(time.Second)), true
	case !t.evictedAt.IsZero() && t.Head:
		return fmt.Sprintf("the cluster did not come back within %s: evicted head %s was not replaced (KubeRay before v1.2.0 never replaces it; see kubectl ray doctor and kubectl ray heal)", timeout, t.Pod), false
	case !t.evictedAt.IsZero():
		return fmt.Sprintf("pod %s was evicted", t.Pod), true
	case t.ended && t.exitCode != 0:
		// The script refused (not enough free space, no shared process namespace) or failed
		// (dd, the fill deadline): the pressure asked for never happened, which is no result.
		return fmt.Sprintf("the pressure did not run as asked: %s exited with code %d%s and pod %s is still Running; its log says why: kubectl logs %s -c %s",
			t.Container, t.exitCode, suffix(t.exitReason), t.Pod, t.Pod, t.Container), false
	case t.ended:
		return fmt.Sprintf("no eviction: %s ended and pod %s is still Running", t.Container, t.Pod), true
	case !t.seen["started"]:
		return fmt.Sprintf("the pressure never started: %s did not run within %s (an image that cannot be pulled? see kubectl describe pod %s)", t.Container, timeout, t.Pod), false
	}
	return fmt.Sprintf("no eviction within %s", timeout), true
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
