package repair

import (
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Replacement is how the operator replaced one cluster's deleted head.
type Replacement struct {
	Cluster   state.Ref `json:"cluster"`
	OldPods   []string  `json:"oldPods"`
	DeletedAt time.Time `json:"deletedAt"`
	// Pod is the new head, "" when none appeared.
	Pod string `json:"pod,omitempty"`
	// Existing: the head that took over was there before the delete (an extra head's survivor).
	Existing bool `json:"existing,omitempty"`
	// SeenAfter is from the delete to the first sight of the new head (time to replacement).
	SeenAfter time.Duration `json:"seenAfterNs,omitempty"`
	// ReadyAfter is from the delete to the new head Running and Ready (time to ready).
	ReadyAfter time.Duration `json:"readyAfterNs,omitempty"`
	Ready      bool          `json:"ready"`
}

// waiter follows head pods and tells when every healed cluster has a Running, Ready head that is
// not one of the pods deleted. It is fed by a watch that starts before the first delete; it
// remembers the heads it saw, so a replacement seen before its cluster is expected still counts.
type waiter struct {
	mu      sync.Mutex
	now     func() time.Time
	seen    map[types.UID]seenPod
	targets map[types.NamespacedName]*target
	sealed  bool
	done    chan struct{}
	closed  bool
}

type seenPod struct {
	pod *corev1.Pod
	at  time.Time
}

type target struct {
	r Replacement
	// sent is when the last delete was sent: a head created before it was already there.
	sent time.Time
	old  map[types.UID]bool
	uid  types.UID // the replacement followed
}

func newWaiter(now func() time.Time) *waiter {
	return &waiter{now: now, seen: map[types.UID]seenPod{}, targets: map[types.NamespacedName]*target{}, done: make(chan struct{})}
}

// expect adds a deleted head: its cluster now needs a replacement.
func (w *waiter) expect(cluster state.Ref, old types.UID, oldName string, at, sent time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Name}
	t := w.targets[key]
	if t == nil {
		t = &target{r: Replacement{Cluster: cluster}, old: map[types.UID]bool{}}
		w.targets[key] = t
	}
	t.old[old] = true
	t.r.OldPods = append(t.r.OldPods, oldName)
	t.r.DeletedAt, t.sent = at, sent
	// A pod deleted now may have been the one followed; start again from what was seen.
	t.uid, t.r.Pod, t.r.Existing, t.r.SeenAfter, t.r.ReadyAfter, t.r.Ready = "", "", false, 0, 0, false
	for _, s := range w.seenSorted() {
		w.update(t, s.pod)
	}
	w.check()
}

// observe is the watch's handler.
func (w *waiter) observe(p *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	at := w.now()
	if prev, ok := w.seen[p.UID]; ok {
		at = prev.at // first sight is what counts
	}
	w.seen[p.UID] = seenPod{pod: p.DeepCopy(), at: at}
	key := types.NamespacedName{Namespace: p.Namespace, Name: p.Labels[ray.LabelCluster]}
	if t := w.targets[key]; t != nil {
		w.update(t, p)
		w.check()
	}
}

// update considers pod p as cluster t's new head. A Running, Ready head wins over one still
// starting.
func (w *waiter) update(t *target, p *corev1.Pod) {
	if t.r.Ready || t.old[p.UID] || p.DeletionTimestamp != nil ||
		p.Namespace != t.r.Cluster.Namespace || p.Labels[ray.LabelCluster] != t.r.Cluster.Name {
		return
	}
	if ray.Terminal(p) {
		return
	}
	if t.uid == "" || t.uid != p.UID && ray.RunningReady(p) {
		t.uid, t.r.Pod = p.UID, p.Name
		// Not DeletedAt, which is when the delete's answer came: a loaded API server can answer
		// after the operator has already created the new head (a cold CI run saw that called
		// "already there"). creationTimestamp has whole seconds.
		t.r.Existing = p.CreationTimestamp.Time.Before(t.sent.Truncate(time.Second))
		t.r.SeenAfter = nonNegative(w.seen[p.UID].at.Sub(t.r.DeletedAt))
		if t.r.Existing {
			t.r.SeenAfter = 0
		}
	}
	if t.uid == p.UID && ray.RunningReady(p) {
		t.r.Ready = true
		t.r.ReadyAfter = nonNegative(w.now().Sub(t.r.DeletedAt))
	}
}

// seal says no more deletes will come: done once every target is ready.
func (w *waiter) seal() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sealed = true
	w.check()
}

func (w *waiter) empty() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.targets) == 0
}

func (w *waiter) check() {
	if !w.sealed || w.closed {
		return
	}
	for _, t := range w.targets {
		if !t.r.Ready {
			return
		}
	}
	w.closed = true
	close(w.done)
}

func (w *waiter) results() []Replacement {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Replacement
	for _, t := range w.targets {
		out = append(out, t.r)
	}
	sort.Slice(out, func(i, j int) bool { return refLess(out[i].Cluster, out[j].Cluster) })
	return out
}

func (w *waiter) seenSorted() []seenPod {
	out := make([]seenPod, 0, len(w.seen))
	for _, s := range w.seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

func nonNegative(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	return d
}
