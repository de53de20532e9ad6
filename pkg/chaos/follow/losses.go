package follow

import (
	"fmt"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Losses is the timeline an experiment that takes pods away shares (drain, worker-kill): it
// turns what the step does (each pod's eviction or delete, each refusal) and what the watches see
// (those pods going, the Ray pods KubeRay makes instead, the Service's endpoints) into the run's
// timeline, and says when the cluster is back: every pod taken gone, every group with as many
// Ready Ray pods as when the step began, the endpoints back. It implements the engine's Tracker
// (pkg/chaos/experiment), which embeds this package's; it is pure and safe for concurrent use:
// the step's calls and each watch call it from their own goroutines.
type Losses struct {
	Record

	// step is the event Disrupted records (its At and Detail filled in): drain's NodeCordoned
	// of the node, worker-kill's WorkersKilled of the cluster; refusedKind is what Refused records.
	step        timeline.Event
	refusedKind timeline.Kind
	label       string // what State names: "node n2", "raycluster/demo"

	taken     map[types.UID]*takenPod // the pods the step takes, by uid
	started   bool
	startedAt time.Time
	// known are the Ray pods that existed before the step began: not KubeRay's answer to it.
	known map[types.UID]bool
	// ready counts each group's Ready Ray pods (cluster/group), as last seen; want is that
	// count when the step began, which recovery waits for again.
	ready map[types.UID]string
	want  map[string]int
	fresh map[types.UID]*freshPod

	epsAtStart int
}

// takenPod is one pod the step takes.
type takenPod struct {
	name string // NAMESPACE/NAME
	// watched: the run's pod watch sees it (a Ray pod of the watched namespace); another pod is
	// done once its eviction is accepted, since nothing here sees it go.
	watched bool
	done    bool // gone, or given up
	gone    bool
	given   bool
}

// freshPod is a Ray pod created after the step began, followed to Ready.
type freshPod struct {
	name               string
	scheduled, isReady bool
}

// NewLosses follows a step that takes pods; step is the event its start records (Kind and
// Object), refused what a refused step records, label what the progress line names, and watched
// says which pods the run's pod watch sees.
func NewLosses(step timeline.Event, refused timeline.Kind, label string, pods []corev1.Pod, watched func(*corev1.Pod) bool) *Losses {
	t := &Losses{step: step, refusedKind: refused, label: label, taken: map[types.UID]*takenPod{},
		known: map[types.UID]bool{}, ready: map[types.UID]string{}, fresh: map[types.UID]*freshPod{}}
	for _, p := range pods {
		t.taken[p.UID] = &takenPod{name: p.Namespace + "/" + p.Name, watched: watched(&p)}
	}
	return t
}

// Disrupted records that the step began (the engine's Tracker); what is its Detail. The Ready
// count of every group is what recovery waits for again.
func (t *Losses) Disrupted(what string, at time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	t.started, t.startedAt = true, at
	t.epsAtStart = len(t.ReadyEndpoints)
	t.want = map[string]int{}
	for _, g := range t.ready {
		t.want[g]++
	}
	e := t.step
	e.At, e.Detail = at, what
	t.Add(e)
}

// Refused records that the step itself failed: nothing was taken (the engine's Tracker).
func (t *Losses) Refused(detail string, at time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	t.Add(timeline.Event{Kind: t.refusedKind, At: at, Object: t.step.Object, Detail: detail})
}

// Note records an event of the experiment's own (drain's NodeUncordoned).
func (t *Losses) Note(e timeline.Event) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	t.Add(e)
}

// Requested, Accepted, RefusedBy and GaveUp record each pod's eviction (or delete) as the step makes it.
func (t *Losses) Requested(p *corev1.Pod, how string, at time.Time) {
	t.event(p, timeline.EvictionRequested, how, at)
}

func (t *Losses) Accepted(p *corev1.Pod, at time.Time) {
	t.Mu.Lock()
	if d := t.taken[p.UID]; d != nil && !d.watched {
		d.done = true
	}
	t.Mu.Unlock()
	t.event(p, timeline.EvictionAccepted, "", at)
}

// RefusedBy records a 429: budget names the PodDisruptionBudget ("" when the server named none),
// said is the server's words.
func (t *Losses) RefusedBy(p *corev1.Pod, budget, said string, at time.Time) {
	detail := said
	if budget != "" {
		detail = fmt.Sprintf("PodDisruptionBudget %s: %s", budget, said)
	}
	t.event(p, timeline.EvictionRefused, detail, at)
}

// GaveUp records that the pod's eviction was given up (why: an error, the timeout).
func (t *Losses) GaveUp(p *corev1.Pod, why string, at time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	if d := t.taken[p.UID]; d != nil && !d.done {
		d.done, d.given = true, true
	}
	t.Add(timeline.Event{Kind: timeline.EvictionFailed, At: at, Object: p.Namespace + "/" + p.Name, Detail: why})
}

func (t *Losses) event(p *corev1.Pod, k timeline.Kind, detail string, at time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	t.Add(timeline.Event{Kind: k, At: at, Object: p.Namespace + "/" + p.Name, Detail: detail})
}

// Pod hears the pod watch: a pod taken gone, and the Ray pods created after the step began
// followed through scheduled and Ready (Tracker).
func (t *Losses) Pod(p *corev1.Pod, deleted bool, at time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	if d := t.taken[p.UID]; d != nil {
		if !d.gone && (deleted || ray.Terminal(p)) {
			d.gone, d.done = true, true
			t.Add(timeline.Event{Kind: timeline.PodGone, At: at, Object: d.name})
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
		t.Add(timeline.Event{Kind: timeline.RayPodCreated, At: at, Object: name, Detail: roleOf(p) + " of group " + group})
	}
	if !f.scheduled && p.Spec.NodeName != "" {
		f.scheduled = true
		t.Add(timeline.Event{Kind: timeline.RayPodScheduled, At: at, Object: name, Detail: p.Spec.NodeName})
	}
	if !f.isReady && ray.RunningReady(p) {
		f.isReady = true
		t.Add(timeline.Event{Kind: timeline.RayPodReady, At: at, Object: name})
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

// RayCluster and RayService are heard and not needed: the pods say what the step changed.
func (t *Losses) RayCluster(*rayv1.RayCluster, bool, time.Time) {}
func (t *Losses) RayService(*rayv1.RayService, time.Time)       {}

// Recovered: every pod taken is gone (or given up), every group has as many Ready Ray pods as
// when the step began, and a probed Service as many ready endpoints.
func (t *Losses) Recovered() (ok bool, since time.Time) {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	if !t.started {
		return false, time.Time{}
	}
	for _, d := range t.taken {
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
	if !t.EndpointsBack(t.epsAtStart) {
		return false, time.Time{}
	}
	return true, t.LastChange
}

// State is the cluster's part of the progress line.
func (t *Losses) State() string {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	if !t.started {
		return t.label + ": nothing taken yet"
	}
	gone, given := 0, 0
	for _, d := range t.taken {
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
	s := fmt.Sprintf("%s: %d of %d pods gone", t.label, gone, len(t.taken))
	if given > 0 {
		s += fmt.Sprintf(", %d given up", given)
	}
	return s + fmt.Sprintf("; %d new Ray pods, %d Ready", len(t.fresh), ready)
}
