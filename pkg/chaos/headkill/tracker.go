// Package headkill runs a head kill: the warm-up, the kill, the watch until recovery or the end,
// under the open-loop probe. Tracker turns what the watches see into timeline events (pure, so
// it is tested without a cluster); Run drives the probe and the kill; Feeder keeps the probe's
// endpoint set equal to the Service's ready endpoints, each behind its own port-forward.
package headkill

import (
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/follow"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Tracker records the head kill's timeline from watch callbacks. It is safe for concurrent use:
// each watch calls it from its own goroutine.
type Tracker struct {
	follow.Record

	oldHead    string
	oldUID     types.UID
	clusters   map[string]bool // clusters whose heads count as "the" head (the target, the RayService's)
	knownHeads map[types.UID]bool
	killed     bool
	killAt     time.Time
	gone       bool

	newHead   string
	newUID    types.UID
	newSteps  map[timeline.Kind]bool
	epsAtKill int
	rcState   map[string]rayv1.ClusterState
	active    string
	pending   string
	rsSeen    bool
}

// NewTracker follows the head pod of cluster; more clusters are added as a RayService names them.
func NewTracker(head *corev1.Pod, cluster string) *Tracker {
	return &Tracker{
		oldHead:    head.Name,
		oldUID:     head.UID,
		clusters:   map[string]bool{cluster: true},
		knownHeads: map[types.UID]bool{head.UID: true},
		newSteps:   map[timeline.Kind]bool{},
		rcState:    map[string]rayv1.ClusterState{},
	}
}

// Disrupted records that the kill was requested, at at (just before the API call); mode says
// how (experiment.Tracker).
func (t *Tracker) Disrupted(mode string, at time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	t.killed, t.killAt = true, at
	t.epsAtKill = len(t.ReadyEndpoints)
	t.Add(timeline.Event{Kind: timeline.KillRequested, At: at, Object: t.oldHead, Detail: mode})
}

// Refused records that the API refused the kill; detail says why (e.g. "429: ...").
func (t *Tracker) Refused(detail string, at time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	t.Add(timeline.Event{Kind: timeline.KillRefused, At: at, Object: t.oldHead, Detail: detail})
}

// Pod follows the old head until it is gone, then the first head created after the kill
// through scheduled, Running and Ready. Heads that existed before the kill are not "new".
func (t *Tracker) Pod(p *corev1.Pod, deleted bool, at time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	if !ray.IsHead(p) || !t.clusters[p.Labels[ray.LabelCluster]] {
		return
	}
	if p.UID == t.oldUID {
		if t.killed && !t.gone && (deleted || ray.Terminal(p)) {
			t.gone = true
			t.Add(timeline.Event{Kind: timeline.OldHeadGone, At: at, Object: p.Name})
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
		t.Add(timeline.Event{Kind: timeline.NewHeadCreated, At: at, Object: p.Name})
	}
	if p.UID != t.newUID || deleted {
		return
	}
	step := func(k timeline.Kind, ok bool) {
		if ok && !t.newSteps[k] {
			t.newSteps[k] = true
			t.Add(timeline.Event{Kind: k, At: at, Object: p.Name})
		}
	}
	step(timeline.NewHeadScheduled, p.Spec.NodeName != "")
	step(timeline.NewHeadRunning, p.Status.Phase == corev1.PodRunning)
	step(timeline.NewHeadReady, ray.RunningReady(p))
}

// RayCluster records the .status.state of the clusters followed when first seen and every change.
func (t *Tracker) RayCluster(rc *rayv1.RayCluster, deleted bool, at time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
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
		t.Add(timeline.Event{Kind: timeline.RayClusterState, At: at, Object: rc.Name, To: string(st), Detail: "first seen"})
	case prev != st:
		t.Add(timeline.Event{Kind: timeline.RayClusterState, At: at, Object: rc.Name, From: string(prev), To: string(st)})
	}
}

// RayService records changes of the active and pending cluster names and follows those clusters.
func (t *Tracker) RayService(rs *rayv1.RayService, at time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	active, pending := rs.Status.ActiveServiceStatus.RayClusterName, rs.Status.PendingServiceStatus.RayClusterName
	for _, c := range []string{active, pending} {
		if c != "" {
			t.clusters[c] = true
		}
	}
	if t.rsSeen {
		if active != t.active {
			t.Add(timeline.Event{Kind: timeline.RayServiceActiveCluster, At: at, Object: rs.Name, From: t.active, To: active})
		}
		if pending != t.pending {
			t.Add(timeline.Event{Kind: timeline.RayServicePendingCluster, At: at, Object: rs.Name, From: t.pending, To: pending})
		}
	}
	t.rsSeen, t.active, t.pending = true, active, pending
}

// Recovered: a new head is Ready and, when a Service is probed, it has at least as many ready
// endpoints as at the kill. since is the time of the last change the tracker recorded.
func (t *Tracker) Recovered() (ok bool, since time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	if !t.killed || !t.newSteps[timeline.NewHeadReady] {
		return false, time.Time{}
	}
	if !t.EndpointsBack(t.epsAtKill) {
		return false, time.Time{}
	}
	return true, t.LastChange
}

// State is the head's part of the progress line.
func (t *Tracker) State() string {
	t.Mu.Lock()
	defer t.Mu.Unlock()
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
