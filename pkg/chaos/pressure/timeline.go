package pressure

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// EvidenceGrace is how long a target seen Succeeded, with no mark of an eviction yet, is given
// for one to arrive. The kubelet records its Evicted Event before it kills the pod, but the Event
// and the pod's status reach the API on separate paths; a pod whose containers exit 0 on SIGTERM
// ends Succeeded with nothing else to show for the eviction.
const EvidenceGrace = 5 * time.Second

// Timeline turns what --watch-eviction sees (the target pod, its replacement, its node, the other
// pods of the node and the kubelet's Evicted Events) into the story of the run: injected,
// pressure seen, evicted, bystanders evicted, replacement created and Running. It is fed by the
// runner's watches and decides nothing about the API.
type Timeline struct {
	Start     time.Time
	Namespace string // the target's
	Pod       string // the target pod
	// UID is the target's: an Event about an older pod of the same name is not about it.
	UID       types.UID
	Node      string
	Container string // our ephemeral container
	// Head: the target is a head, so a new head pod of the same cluster is its replacement.
	Head bool
	// EndedBefore holds the pods of the node that had already ended when the run began (by uid):
	// that they are Failed, or Evicted, is no news of this run.
	EndedBefore map[types.UID]bool

	tl          *timeline.Timeline
	seen        map[string]bool
	evictedAt   time.Time // the target evicted, or ended with no mark of an eviction (endedHow)
	endedHow    string    // "" for an eviction, else the phase it ended in, e.g. "Succeeded"
	pendingAt   time.Time // the target seen Succeeded with no mark yet (EvidenceGrace)
	replacement string
	cameBack    time.Time
	ended       bool // our container terminated while the pod was not evicted
	exitCode    int32
	exitReason  string
	exitSaid    string // the last line of its log, from the terminated message
	bystanders  []string
	ramp        *Ramp // from our memory container's log
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

// ObservePod takes a pod from the target's watch (the target or, for a head, any head of its
// cluster).
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
	t.observeOurs(p, now)
	if msg, ok := ray.KubeletEvictionMark(p); ok {
		how := ""
		if p.Status.Phase == corev1.PodSucceeded {
			how = " (it ended Succeeded)"
		}
		t.evicted(now, msg, how)
		return
	}
	switch p.Status.Phase {
	case corev1.PodFailed:
		t.endedUnmarked(now, "Failed"+suffix(p.Status.Reason))
	case corev1.PodSucceeded:
		if t.pendingAt.IsZero() {
			t.pendingAt = now
		}
	}
}

// observeOurs follows our ephemeral container: started, then exited.
func (t *Timeline) observeOurs(p *corev1.Pod, now time.Time) {
	for _, cs := range p.Status.EphemeralContainerStatuses {
		if cs.Name != t.Container {
			continue
		}
		if cs.State.Running != nil {
			t.note(now, "started", timeline.Event{Kind: timeline.PressureStarted, Object: cs.Name}, "%s started", cs.Name)
		}
		if term := cs.State.Terminated; term != nil {
			t.note(now, "exited", timeline.Event{Kind: timeline.PressureExited, Object: cs.Name, Detail: fmt.Sprintf("code %d%s", term.ExitCode, suffix(term.Reason))}, "%s exited with code %d%s", cs.Name, term.ExitCode, suffix(term.Reason))
			if p.Status.Phase == corev1.PodRunning && !t.ended {
				t.ended, t.exitCode, t.exitReason = true, term.ExitCode, term.Reason
				t.exitSaid = lastLine(term.Message, t.Container+": ")
			}
		}
	}
}

// ObserveNodePod takes a pod from the watch of the target's node: one the kubelet evicted is a
// bystander of this run. The target and its replacement are the target watch's.
func (t *Timeline) ObserveNodePod(p *corev1.Pod, deleted bool, now time.Time) {
	if deleted || p.Spec.NodeName != t.Node || t.isTarget(p.Namespace, p.Name, p.UID) || t.EndedBefore[p.UID] || p.Name == t.replacement {
		return
	}
	if msg, ok := ray.KubeletEvictionMark(p); ok {
		t.bystander(now, p.Namespace+"/"+p.Name, msg)
	}
}

// ObserveEvent takes an Event from the watch of the kubelet's Evicted Events: about the target,
// it is the eviction (however the pod ends); about another pod of the node, a bystander.
func (t *Timeline) ObserveEvent(ev *corev1.Event, now time.Time) {
	if !kubeletEviction(ev) {
		return
	}
	o := ev.InvolvedObject
	msg := strings.TrimSpace(ev.Message)
	if t.isTarget(o.Namespace, o.Name, o.UID) {
		t.evicted(now, msg, "")
		return
	}
	if o.Name == t.Pod && o.Namespace == t.Namespace {
		return // an older pod of the target's name: its Event's count went up, nothing happened now
	}
	onNode := ev.Source.Host == t.Node || (ev.Source.Host == "" && ev.ReportingInstance == t.Node)
	if onNode && !t.EndedBefore[o.UID] && o.Name != t.replacement {
		t.bystander(now, o.Namespace+"/"+o.Name, msg)
	}
}

// Tick lets time pass: a target Succeeded for EvidenceGrace with no mark of an eviction ended
// without one.
func (t *Timeline) Tick(now time.Time) {
	if !t.pendingAt.IsZero() && t.evictedAt.IsZero() && now.Sub(t.pendingAt) >= EvidenceGrace {
		t.endedUnmarked(t.pendingAt, "Succeeded")
	}
}

func (t *Timeline) evicted(now time.Time, msg, how string) {
	t.note(now, "evicted", timeline.Event{Kind: timeline.PodEvicted, Object: t.Pod, Detail: msg}, "pod %s evicted%s: %s", t.Pod, how, msg)
	if t.evictedAt.IsZero() {
		t.evictedAt, t.endedHow = now, ""
	}
}

// endedUnmarked: the target ended in phase (e.g. "Failed (OOMKilled)", "Succeeded") with no mark
// of an eviction. It is down all the same, so a head is waited for as after an eviction.
func (t *Timeline) endedUnmarked(at time.Time, phase string) {
	t.note(at, "ended", timeline.Event{Kind: timeline.PodEnded, Object: t.Pod, Detail: phase},
		"pod %s ended %s with no mark of an eviction (no Evicted reason, DisruptionTarget condition or Evicted Event)", t.Pod, phase)
	if t.evictedAt.IsZero() {
		t.evictedAt, t.endedHow = at, phase
	}
}

func (t *Timeline) bystander(now time.Time, ref, msg string) {
	if t.seen["bystander "+ref] {
		return
	}
	t.bystanders = append(t.bystanders, ref)
	t.note(now, "bystander "+ref, timeline.Event{Kind: timeline.BystanderEvicted, Object: ref, Detail: msg}, "bystander pod %s on node %s evicted: %s", ref, t.Node, msg)
}

func (t *Timeline) isTarget(namespace, name string, uid types.UID) bool {
	return name == t.Pod && (t.Namespace == "" || namespace == t.Namespace) && (t.UID == "" || uid == "" || uid == t.UID)
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

// kubeletEviction is an Event the kubelet's eviction manager records on the pod it evicts.
func kubeletEviction(ev *corev1.Event) bool {
	return ev.Reason == "Evicted" && ev.InvolvedObject.Kind == "Pod" &&
		(ev.Source.Component == "kubelet" || ev.ReportingController == "kubelet")
}

// lastLine is the last non-empty line of s, without prefix.
func lastLine(s, prefix string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimPrefix(strings.TrimSpace(lines[len(lines)-1]), prefix)
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
