// Package headkill runs a head kill: the warm-up, the kill, the watch until recovery or the end,
// under the open-loop probe. Tracker turns what the watches see into timeline events (pure, so
// it is tested without a cluster); Run drives the probe and the kill; Feeder keeps the probe's
// endpoint set equal to the Service's ready endpoints, each behind its own port-forward.
package headkill

import (
	"slices"
	"sync"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Tracker records the head kill's timeline from watch callbacks. It is safe for concurrent use:
// each watch calls it from its own goroutine.
type Tracker struct {
	mu sync.Mutex
	tl *timeline.Timeline

	oldHead    string
	oldUID     types.UID
	clusters   map[string]bool // clusters whose heads count as "the" head (the target, the RayService's)
	knownHeads map[types.UID]bool
	killed     bool
	killAt     time.Time
	gone       bool

	newHead    string
	newUID     types.UID
	newSteps   map[timeline.Kind]bool
	endpoints  []string
	tracksEPs  bool
	epsAtKill  int
	rcState    map[string]rayv1.ClusterState
	active     string
	pending    string
	rsSeen     bool
	lastChange time.Time
}

// NewTracker follows the head pod of cluster; more clusters are added as a RayService names them.
func NewTracker(head *corev1.Pod, cluster string) *Tracker {
	return &Tracker{
		tl:         &timeline.Timeline{},
		oldHead:    head.Name,
		oldUID:     head.UID,
		clusters:   map[string]bool{cluster: true},
		knownHeads: map[types.UID]bool{head.UID: true},
		newSteps:   map[timeline.Kind]bool{},
		rcState:    map[string]rayv1.ClusterState{},
	}
}

// Timeline returns the events so far.
func (t *Tracker) Timeline() *timeline.Timeline {
	t.mu.Lock()
	defer t.mu.Unlock()
	return timeline.New(t.tl.Events()...)
}

func (t *Tracker) add(e timeline.Event) {
	t.tl.Add(e)
	t.lastChange = e.At
}

// Disrupted records that the kill was requested, at at (just before the API call); mode says
// how (experiment.Tracker).
func (t *Tracker) Disrupted(mode string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.killed, t.killAt = true, at
	t.epsAtKill = len(t.endpoints)
	t.add(timeline.Event{Kind: timeline.KillRequested, At: at, Object: t.oldHead, Detail: mode})
}

// Refused records that the API refused the kill; detail says why (e.g. "429: ...").
func (t *Tracker) Refused(detail string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.add(timeline.Event{Kind: timeline.KillRefused, At: at, Object: t.oldHead, Detail: detail})
}

// Pod follows the old head until it is gone, then the first head created after the kill
// through scheduled, Running and Ready. Heads that existed before the kill are not "new".
func (t *Tracker) Pod(p *corev1.Pod, deleted bool, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !ray.IsHead(p) || !t.clusters[p.Labels[ray.LabelCluster]] {
		return
	}
	if p.UID == t.oldUID {
		if t.killed && !t.gone && (deleted || ray.Terminal(p)) {
			t.gone = true
			t.add(timeline.Event{Kind: timeline.OldHeadGone, At: at, Object: p.Name})
		}
		return
	}
	if !t.killed {
		t.knownHeads[p.UID] = true
		return
	}
	if t.knownHeads[p.UID] && p.UID != t.newUID {
		return
	}
	if t.newUID == "" {
		if deleted {
			return
		}
		t.newHead, t.newUID = p.Name, p.UID
		t.add(timeline.Event{Kind: timeline.NewHeadCreated, At: at, Object: p.Name})
	}
	if p.UID != t.newUID || deleted {
		return
	}
	step := func(k timeline.Kind, ok bool) {
		if ok && !t.newSteps[k] {
			t.newSteps[k] = true
			t.add(timeline.Event{Kind: k, At: at, Object: p.Name})
		}
	}
	step(timeline.NewHeadScheduled, p.Spec.NodeName != "")
	step(timeline.NewHeadRunning, p.Status.Phase == corev1.PodRunning)
	step(timeline.NewHeadReady, ray.RunningReady(p))
}

// Endpoints takes the full set of ready endpoint pods and records who came and went.
func (t *Tracker) Endpoints(names []string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tracksEPs = true
	for _, n := range t.endpoints {
		if !slices.Contains(names, n) {
			t.add(timeline.Event{Kind: timeline.EndpointRemoved, At: at, Object: n})
		}
	}
	for _, n := range names {
		if !slices.Contains(t.endpoints, n) {
			t.add(timeline.Event{Kind: timeline.EndpointAdded, At: at, Object: n})
		}
	}
	t.endpoints = slices.Clone(names)
}

// RayCluster records the .status.state of the clusters followed when first seen and every change.
func (t *Tracker) RayCluster(rc *rayv1.RayCluster, deleted bool, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.clusters[rc.Name] {
		return
	}
	st := rc.Status.State //nolint:staticcheck // KubeRay v1.1.1 has only the state field
	if deleted {
		st = "deleted"
	}
	prev, seen := t.rcState[rc.Name]
	t.rcState[rc.Name] = st
	switch {
	case !seen:
		// The state at the start, so the report can tell "stayed ready" from "never ready".
		t.add(timeline.Event{Kind: timeline.RayClusterState, At: at, Object: rc.Name, To: string(st), Detail: "first seen"})
	case prev != st:
		t.add(timeline.Event{Kind: timeline.RayClusterState, At: at, Object: rc.Name, From: string(prev), To: string(st)})
	}
}

// RayService records changes of the active and pending cluster names and follows those clusters.
func (t *Tracker) RayService(rs *rayv1.RayService, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	active, pending := rs.Status.ActiveServiceStatus.RayClusterName, rs.Status.PendingServiceStatus.RayClusterName
	for _, c := range []string{active, pending} {
		if c != "" {
			t.clusters[c] = true
		}
	}
	if t.rsSeen {
		if active != t.active {
			t.add(timeline.Event{Kind: timeline.RayServiceActiveCluster, At: at, Object: rs.Name, From: t.active, To: active})
		}
		if pending != t.pending {
			t.add(timeline.Event{Kind: timeline.RayServicePendingCluster, At: at, Object: rs.Name, From: t.pending, To: pending})
		}
	}
	t.rsSeen, t.active, t.pending = true, active, pending
}

// Recovered: a new head is Ready and, when a Service is probed, it has at least as many ready
// endpoints as at the kill. since is the time of the last change the tracker recorded.
func (t *Tracker) Recovered() (ok bool, since time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.killed || !t.newSteps[timeline.NewHeadReady] {
		return false, time.Time{}
	}
	if t.tracksEPs && len(t.endpoints) < t.epsAtKill {
		return false, time.Time{}
	}
	return true, t.lastChange
}

// State is the head's part of the progress line.
func (t *Tracker) State() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case !t.killed:
		return "head " + t.oldHead + " up"
	case t.newHead == "" && !t.gone:
		return "head " + t.oldHead + " terminating"
	case t.newHead == "":
		return "head " + t.oldHead + " gone, no new head yet"
	case t.newSteps[timeline.NewHeadReady]:
		return "new head " + t.newHead + " Ready"
	case t.newSteps[timeline.NewHeadRunning]:
		return "new head " + t.newHead + " Running"
	case t.newSteps[timeline.NewHeadScheduled]:
		return "new head " + t.newHead + " scheduled"
	}
	return "new head " + t.newHead + " created"
}
