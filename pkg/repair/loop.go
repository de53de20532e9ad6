package repair

import (
	"context"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// ClusterCache is the watchdog's view of the cluster: one RayCluster's state as a Snapshot.
type ClusterCache interface {
	Snapshot(key types.NamespacedName, now time.Time) (*state.Snapshot, bool)
}

// Loop is the heart of heal's watchdog (pkg/watchdog assembles the rest: informers, leader
// election, metrics): it runs the same Diagnose and Plan as the one-shot command, for one
// RayCluster at a time, whenever the informers report a change to it, and deletes a head once it
// has been healable for MinAge. The grace guards against the Failed→Running flap of a pod with
// restartPolicy Always (seed 000): a head that leaves the plan before MinAge is never touched.
type Loop struct {
	LoopConfig

	queue workqueue.TypedRateLimitingInterface[types.NamespacedName]
	mu    sync.Mutex
	// since: when each healable head was first planned, per cluster.
	since map[types.NamespacedName]map[types.UID]time.Time
	// acted: heads already deleted; the informer shows them until the deletion lands.
	acted map[types.UID]time.Time
	// told: not-healable findings already logged, so each is logged once.
	told map[string]bool
	// replacing: clusters whose head was deleted, waiting for a new head to be Ready.
	replacing map[types.NamespacedName]replacing
	// settled: Settled has been called.
	settled sync.Once
}

// replacing is a deleted head whose replacement the watchdog has not yet seen Ready.
type replacing struct {
	rule string
	at   time.Time
	old  types.UID
}

// LoopConfig is what a Loop is built from.
type LoopConfig struct {
	Cache    ClusterCache
	Diagnose func(*state.Snapshot) []diagnose.Finding
	Exec     *Executor // Deleter and Events; no Wait, no Replan: a change re-queues the cluster
	Opts     Options
	MinAge   time.Duration
	Now      func() time.Time
	Log      *Logger
	Workers  int
	// Recheck says when a cluster's findings can change with time alone, no object changing (a
	// terminating head passing its margin becomes stuck: diagnose.TerminatingDeadline); the
	// cluster is examined again just after. Without it, only informer events re-examine.
	Recheck func(*state.Snapshot) (time.Time, bool)
	// Clock times the queue's delays (MinAge, Recheck, retries) and the heartbeat; nil is the
	// real clock.
	Clock clock.WithTicker
	// Observer hears outcomes, refusals, broken heads and timings (metrics); nil hears nothing.
	Observer Observer
	// Heartbeat: how often a heartbeat goes through the queue, so an Observer can tell a
	// wedged watchdog (beats stop) from an idle one (beats go on). Zero sends none.
	Heartbeat time.Duration
	// Settled is called once, the first time the queue is empty after an examination: the
	// first pass over the fleet the caches' sync queued is done. nil calls nothing.
	Settled func()
}

// heartbeatKey is the queue item of the heartbeat: no RayCluster has an empty name.
var heartbeatKey = types.NamespacedName{}

// recheckSlack: rules compare with "past the deadline", so re-examine a little after it.
const recheckSlack = time.Second

// NewLoop is a Loop with its queue.
func NewLoop(cfg LoopConfig) *Loop {
	w := &Loop{LoopConfig: cfg}
	// A failed delete is retried with the controller backoff (5 ms doubling to 1000 s per cluster).
	w.queue = workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
		workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Clock: cfg.Clock})
	w.since = map[types.NamespacedName]map[types.UID]time.Time{}
	w.acted = map[types.UID]time.Time{}
	w.told = map[string]bool{}
	w.replacing = map[types.NamespacedName]replacing{}
	if w.Observer == nil {
		w.Observer = NopObserver{}
	}
	if w.Clock == nil {
		w.Clock = clock.RealClock{}
	}
	if w.Workers <= 0 {
		w.Workers = 4
	}
	if w.Now == nil {
		w.Now = time.Now
	}
	return w
}

// Changed queues a RayCluster for examination; the informers' handlers call it.
func (w *Loop) Changed(key types.NamespacedName) { w.queue.Add(key) }

// Run examines queued clusters until ctx ends. Cancelling ctx (leadership lost) stops acting at
// once: no delete starts after it, and a delete in flight is cancelled with it.
func (w *Loop) Run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		w.queue.ShutDown()
	}()
	w.Observer.Beat(w.Now())
	if w.Heartbeat > 0 {
		go w.heartbeat(ctx)
	}
	var wg sync.WaitGroup
	for i := 0; i < w.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				key, quit := w.queue.Get()
				if quit {
					return
				}
				if key != heartbeatKey {
					w.sync(ctx, key)
				}
				w.queue.Done(key)
				w.Observer.Beat(w.Now())
				if w.Settled != nil && w.queue.Len() == 0 {
					w.settled.Do(w.Settled)
				}
			}
		}()
	}
	wg.Wait()
}

// sync examines one cluster.
func (w *Loop) sync(ctx context.Context, key types.NamespacedName) {
	now := w.Now()
	s, ok := w.Cache.Snapshot(key, now)
	if !ok {
		w.mu.Lock()
		delete(w.since, key)
		delete(w.replacing, key)
		w.mu.Unlock()
		w.Observer.Broken(key, nil)
		return
	}
	w.replacedYet(key, s, now)
	plan := Plan(s, w.Diagnose(s), w.Opts)
	for _, sk := range plan.NotHealable {
		if w.tellOnce(sk) && sk.Rule == diagnose.RuleHeadRecreateLoop {
			w.recordBackOff(ctx, sk, now)
		}
	}
	if w.Recheck != nil {
		if at, ok := w.Recheck(s); ok && at.After(now) {
			w.queue.AddAfter(key, at.Sub(now)+recheckSlack)
		}
	}
	failed := false
	due, broken := w.due(key, plan, now)
	w.Observer.Broken(key, broken)
	for _, d := range due {
		if ctx.Err() != nil {
			return
		}
		a := d.Action
		o := w.Exec.apply(ctx, a, false)
		if ctx.Err() != nil && o.Result == Failed {
			w.Log.Line("warn", "stopped acting: leadership lost or shutting down", "pod", a.Pod.Namespace+"/"+a.Pod.Name)
			return
		}
		w.logOutcome(o)
		w.Observer.Outcome(o)
		switch o.Result {
		case Deleted, DryRun, Gone:
			w.mu.Lock()
			w.acted[types.UID(a.Pod.UID)] = o.At
			if o.Result == Deleted && a.Role() == "head" {
				w.replacing[key] = replacing{rule: a.Rule, at: o.At, old: types.UID(a.Pod.UID)}
			}
			w.mu.Unlock()
			if o.Result == Deleted {
				w.Observer.SeenToDelete(a.Rule, o.At.Sub(d.first))
			}
		case Failed:
			failed = true
		}
	}
	// A failed delete (timeout, 5xx, 429) changes no object, so no event would bring the
	// cluster back: retry it with backoff. A clean pass resets the backoff.
	if failed {
		w.queue.AddRateLimited(key)
	} else {
		w.queue.Forget(key)
	}
}

// dueAction is an action whose head has needed healing for MinAge, since first.
type dueAction struct {
	Action
	first time.Time
}

// due returns the actions healable for MinAge, and re-queues the cluster for the others. broken
// counts, by rule, the heads still to act on (nil when none).
func (w *Loop) due(key types.NamespacedName, plan HealPlan, now time.Time) (out []dueAction, broken map[string]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for uid, at := range w.acted {
		if now.Sub(at) > 10*time.Minute {
			delete(w.acted, uid)
		}
	}
	prev := w.since[key]
	next := map[types.UID]time.Time{}
	var wait time.Duration
	for _, a := range plan.Actions {
		uid := types.UID(a.Pod.UID)
		if _, done := w.acted[uid]; done {
			continue
		}
		first, ok := prev[uid]
		if !ok {
			first = now
		}
		next[uid] = first
		if broken == nil {
			broken = map[string]int{}
		}
		broken[a.Rule]++
		if left := w.MinAge - now.Sub(first); left > 0 {
			if wait == 0 || left < wait {
				wait = left
			}
			continue
		}
		out = append(out, dueAction{Action: a, first: first})
	}
	// Heads no longer in the plan (they recovered, or changed) start their grace again.
	if len(next) == 0 {
		delete(w.since, key)
	} else {
		w.since[key] = next
	}
	if wait > 0 {
		w.queue.AddAfter(key, wait)
	}
	return out, broken
}

// heartbeat puts heartbeatKey through the queue every Heartbeat until ctx ends.
func (w *Loop) heartbeat(ctx context.Context) {
	t := w.Clock.NewTicker(w.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			w.queue.Add(heartbeatKey)
		}
	}
}

// replacedYet tells the Observer how long a head deleted by the watchdog took to be replaced,
// once the cluster has a Running and Ready head other than the deleted one.
func (w *Loop) replacedYet(key types.NamespacedName, s *state.Snapshot, now time.Time) {
	w.mu.Lock()
	r, ok := w.replacing[key]
	w.mu.Unlock()
	if !ok {
		return
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.UID == r.old || !ray.IsHead(p) || !ray.RunningReady(p) {
			continue
		}
		w.mu.Lock()
		delete(w.replacing, key)
		w.mu.Unlock()
		w.Observer.Replaced(r.rule, now.Sub(r.at))
		return
	}
}

// recordBackOff writes the Event saying the watchdog leaves a looping cluster alone; a failure
// to write it is logged, and changes nothing else.
func (w *Loop) recordBackOff(ctx context.Context, sk Skip, now time.Time) {
	if w.Exec == nil || w.Exec.Events == nil {
		return
	}
	if err := w.Exec.Events.CreateEvent(ctx, BackOffEvent(sk, now), false); err != nil {
		w.Log.Line("warn", "could not record the back-off Event", "raycluster", sk.Cluster.Namespace+"/"+sk.Cluster.Name, "error", err.Error())
	}
}

// tellOnce logs a not-healable finding the first time it is seen, and says whether it was.
func (w *Loop) tellOnce(sk Skip) bool {
	why := sk.Why
	if strings.HasPrefix(why, backOffPrefix) {
		// Its counts and window move with every turn and every minute: once per head is enough.
		why = backOffPrefix
	}
	k := sk.Rule + "|" + sk.Object.Namespace + "/" + sk.Object.Name + "|" + sk.Object.UID + "|" + why
	w.mu.Lock()
	seen := w.told[k]
	w.told[k] = true
	w.mu.Unlock()
	if !seen {
		if sk.Rule == diagnose.RuleHeadRecreateLoop {
			w.Observer.BackedOff(sk)
		} else {
			w.Observer.Refused(sk)
		}
		w.Log.Line("info", "not healable", "rule", sk.Rule, "raycluster", sk.Cluster.Namespace+"/"+sk.Cluster.Name,
			"object", sk.Object.Name, "why", sk.Why)
	}
	return !seen
}

func (w *Loop) logOutcome(o Outcome) {
	a := o.Action
	level := "info"
	if o.Result == Failed {
		level = "error"
	}
	kv := []any{"action", a.Verb(), "result", string(o.Result), "rule", a.Rule,
		"raycluster", a.Cluster.Namespace + "/" + a.Cluster.Name, "pod", a.Pod.Name, "uid", a.Pod.UID,
		"resourceVersion", a.ResourceVersion, "node", a.Node}
	if o.EventProblem != "" {
		kv = append(kv, "eventProblem", o.EventProblem)
	}
	if o.Evidence != "" {
		kv = append(kv, "evidence", o.Evidence)
	}
	if o.EvidenceProblem != "" {
		kv = append(kv, "evidenceProblem", o.EvidenceProblem)
	}
	w.Log.Line(level, o.Message, kv...)
}
