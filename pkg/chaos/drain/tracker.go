package drain

import (
	"fmt"
	"slices"
	"sync"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Tracker turns what a drain does (the cordon, each eviction and refusal) and what the watches see
// (the drained pods going, the Ray pods KubeRay makes instead, the Service's endpoints) into the
// run's timeline, and says when the cluster is back. It is pure and safe for concurrent use: the
// step's evictions and each watch call it from their own goroutines.
type Tracker struct {
	mu sync.Mutex
	tl *timeline.Timeline

	node      string
	drained   map[types.UID]*drainedPod // the pods the drain evicts, by uid
	started   bool                      // the cordon was requested
	startedAt time.Time
	// known are the Ray pods that existed before the drain began: not KubeRay's answer to it.
	known map[types.UID]bool
	// ready counts each group's Ready Ray pods (cluster/group), as last seen; want is that
	// count when the drain began, which recovery waits for again.
	ready map[types.UID]string
	want  map[string]int
	fresh map[types.UID]*freshPod

	endpoints  []string
	tracksEPs  bool
	epsAtStart int
	lastChange time.Time
}

// drainedPod is one pod the drain evicts.
type drainedPod struct {
	name string // NAMESPACE/NAME
	// watched: the run's pod watch sees it (a Ray pod of the watched namespace); another pod is
	// done once its eviction is accepted, since nothing here sees it go.
	watched bool
	done    bool // gone, or given up
	gone    bool
	given   bool
}

// freshPod is a Ray pod created after the drain began, followed to Ready.
type freshPod struct {
	name               string
	scheduled, isReady bool
}

// NewTracker follows the drain of node, which evicts pods; watched says which of them the run's
// pod watch sees.
func NewTracker(node string, pods []corev1.Pod, watched func(*corev1.Pod) bool) *Tracker {
	t := &Tracker{tl: &timeline.Timeline{}, node: node, drained: map[types.UID]*drainedPod{},
		known: map[types.UID]bool{}, ready: map[types.UID]string{}, fresh: map[types.UID]*freshPod{}}
	for _, p := range pods {
		t.drained[p.UID] = &drainedPod{name: p.Namespace + "/" + p.Name, watched: watched(&p)}
	}
	return t
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

// Disrupted records that the drain began: the node is being cordoned (experiment.Tracker). The
// Ready count of every group is what recovery waits for again.
func (t *Tracker) Disrupted(what string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.started, t.startedAt = true, at
	t.epsAtStart = len(t.endpoints)
	t.want = map[string]int{}
	for _, g := range t.ready {
		t.want[g]++
	}
	t.add(timeline.Event{Kind: timeline.NodeCordoned, At: at, Object: t.node, Detail: what})
}

// Refused records that the cordon itself failed: nothing was evicted (experiment.Tracker).
func (t *Tracker) Refused(detail string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.add(timeline.Event{Kind: timeline.EvictionFailed, At: at, Object: t.node, Detail: detail})
}

// Uncordoned records that the run made the node schedulable again.
func (t *Tracker) Uncordoned(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.add(timeline.Event{Kind: timeline.NodeUncordoned, At: at, Object: t.node})
}

// Requested, Accepted, RefusedBy and GaveUp record each pod's eviction as the step makes it.
func (t *Tracker) Requested(p *corev1.Pod, how string, at time.Time) {
	t.event(p, timeline.EvictionRequested, how, at)
}

func (t *Tracker) Accepted(p *corev1.Pod, at time.Time) {
	t.mu.Lock()
	if d := t.drained[p.UID]; d != nil && !d.watched {
		d.done = true
	}
	t.mu.Unlock()
	t.event(p, timeline.EvictionAccepted, "", at)
}

// RefusedBy records a 429: budget names the PodDisruptionBudget ("" when the server named none),
// said is the server's words.
func (t *Tracker) RefusedBy(p *corev1.Pod, budget, said string, at time.Time) {
	detail := said
	if budget != "" {
		detail = fmt.Sprintf("PodDisruptionBudget %s: %s", budget, said)
	}
	t.event(p, timeline.EvictionRefused, detail, at)
}

// GaveUp records that the pod's eviction was given up (why: an error, the timeout).
func (t *Tracker) GaveUp(p *corev1.Pod, why string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d := t.drained[p.UID]; d != nil && !d.done {
		d.done, d.given = true, true
	}
	t.add(timeline.Event{Kind: timeline.EvictionFailed, At: at, Object: p.Namespace + "/" + p.Name, Detail: why})
}

func (t *Tracker) event(p *corev1.Pod, k timeline.Kind, detail string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.add(timeline.Event{Kind: k, At: at, Object: p.Namespace + "/" + p.Name, Detail: detail})
}

// Pod hears the pod watch: a drained pod gone, and the Ray pods created after the drain began
// followed through scheduled and Ready (experiment.WatchTracker).
func (t *Tracker) Pod(p *corev1.Pod, deleted bool, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d := t.drained[p.UID]; d != nil {
		if !d.gone && (deleted || ray.Terminal(p)) {
			d.gone, d.done = true, true
			t.add(timeline.Event{Kind: timeline.DrainedPodGone, At: at, Object: d.name})
		}
	}
	if !ray.IsRayPod(p) {
		return
	}
	group := p.Labels[ray.LabelCluster] + "/" + groupOf(p)
	if ray.RunningReady(p) && !deleted && p.DeletionTimestamp == nil {
		t.ready[p.UID] = group
	} else {
		delete(t.ready, p.UID)
	}
	if !t.started {
		t.known[p.UID] = true
		return
	}
	if t.known[p.UID] || deleted {
		return
	}
	name := p.Namespace + "/" + p.Name
	f := t.fresh[p.UID]
	if f == nil {
		f = &freshPod{name: name}
		t.fresh[p.UID] = f
		t.add(timeline.Event{Kind: timeline.RayPodCreated, At: at, Object: name, Detail: roleOf(p) + " of group " + group})
	}
	if !f.scheduled && p.Spec.NodeName != "" {
		f.scheduled = true
		t.add(timeline.Event{Kind: timeline.RayPodScheduled, At: at, Object: name, Detail: p.Spec.NodeName})
	}
	if !f.isReady && ray.RunningReady(p) {
		f.isReady = true
		t.add(timeline.Event{Kind: timeline.RayPodReady, At: at, Object: name})
	}
}

// groupOf is the pod's worker group, or "headgroup" for a head (KubeRay labels heads so too).
func groupOf(p *corev1.Pod) string {
	if g := p.Labels[ray.LabelGroup]; g != "" {
		return g
	}
	return roleOf(p)
}

func roleOf(p *corev1.Pod) string {
	if ray.IsHead(p) {
		return "head"
	}
	return "worker"
}

// RayCluster and RayService are heard and not needed: the pods say what a drain changed.
func (t *Tracker) RayCluster(*rayv1.RayCluster, bool, time.Time) {}
func (t *Tracker) RayService(*rayv1.RayService, time.Time)       {}

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

// Recovered: every drained pod is gone (or given up), every group has as many Ready Ray pods as
// when the drain began, and a probed Service as many ready endpoints.
func (t *Tracker) Recovered() (ok bool, since time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		return false, time.Time{}
	}
	for _, d := range t.drained {
		if !d.done {
			return false, time.Time{}
		}
	}
	have := map[string]int{}
	for _, g := range t.ready {
		have[g]++
	}
	for g, n := range t.want {
		if have[g] < n {
			return false, time.Time{}
		}
	}
	if t.tracksEPs && len(t.endpoints) < t.epsAtStart {
		return false, time.Time{}
	}
	return true, t.lastChange
}

// State is the drain's part of the progress line.
func (t *Tracker) State() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		return "node " + t.node + " not cordoned yet"
	}
	gone, given := 0, 0
	for _, d := range t.drained {
		if d.gone {
			gone++
		} else if d.given {
			given++
		}
	}
	ready := 0
	for _, f := range t.fresh {
		if f.isReady {
			ready++
		}
	}
	s := fmt.Sprintf("node %s: %d of %d pods gone", t.node, gone, len(t.drained))
	if given > 0 {
		s += fmt.Sprintf(", %d given up", given)
	}
	return s + fmt.Sprintf("; %d new Ray pods, %d Ready", len(t.fresh), ready)
}
