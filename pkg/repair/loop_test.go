package repair

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// fixedCache serves one cluster whose objects never change: only the clock moves, so nothing
// but the watchdog's own timers can bring the cluster back to it.
type fixedCache struct{ s state.Snapshot }

func (c fixedCache) Snapshot(_ types.NamespacedName, now time.Time) (*state.Snapshot, bool) {
	s := c.s
	s.Now = now
	return &s, true
}

// countingDeleter fails the first failures deletes, then succeeds; it counts every call.
type countingDeleter struct {
	mu       sync.Mutex
	calls    int
	failures int
}

func (d *countingDeleter) DeletePod(context.Context, string, string, types.UID, string, *int64, bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	if d.calls <= d.failures {
		return errors.New("etcdserver: request timed out")
	}
	return nil
}

func (d *countingDeleter) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls
}

type noEvents struct{}

func (noEvents) CreateEvent(context.Context, *corev1.Event, bool) error { return nil }

func startWatchdog(t *testing.T, s state.Snapshot, del *countingDeleter, clk *clocktesting.FakeClock, force bool) *Loop {
	t.Helper()
	rules := diagnose.DefaultOptions()
	w := NewLoop(LoopConfig{
		Cache:    fixedCache{s},
		Diagnose: func(s *state.Snapshot) []diagnose.Finding { return diagnose.Diagnose(s, rules).Findings },
		Recheck:  func(s *state.Snapshot) (time.Time, bool) { return diagnose.TerminatingDeadline(s, rules) },
		Exec:     &Executor{Deleter: del, Events: noEvents{}, Now: clk.Now},
		Opts:     Options{Force: force},
		Now:      clk.Now,
		Clock:    clk,
		Log:      NewLogger(io.Discard, "logfmt", clk.Now),
		Workers:  1,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// waitCalls waits (real time, for the worker goroutine) until del has seen want calls, and
// fails if it sees more.
func waitCalls(t *testing.T, del *countingDeleter, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for del.count() < want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // room for a wrong extra call to show
	if got := del.count(); got != want {
		t.Fatalf("%d delete calls, want %d", got, want)
	}
}

// A head the taint manager deleted on a dead node is seen once, inside its grace period, and
// never changes again (its kubelet is gone). The watchdog must come back to it by itself when
// the head becomes stuck, and force-delete it (kuberay #4078).
func TestWatchdogComesBackToAHeadThatBecomesStuck(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := cluster("ml", "rc")
	p := head(c, "rc-head")
	grace := metav1.NewTime(t0.Add(30 * time.Second))
	p.DeletionTimestamp = &grace
	p.Spec.NodeName = "dead"
	s := state.Snapshot{Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{p},
		Nodes: []corev1.Node{node("dead", corev1.ConditionUnknown)},
		Blind: []state.Gap{{Resource: "deployments", Reason: "not watched"}}}
	del := &countingDeleter{}
	w := startWatchdog(t, s, del, clk, true)
	w.Changed(types.NamespacedName{Namespace: "ml", Name: "rc"})
	waitCalls(t, del, 0)

	// Grace (30 s) + margin (1 m) not yet over: nothing.
	clk.Step(80 * time.Second)
	waitCalls(t, del, 0)
	// Past it (plus the recheck slack): the watchdog re-examines and force-deletes, no event needed.
	clk.Step(15 * time.Second)
	waitCalls(t, del, 1)
}

// A delete that fails (timeout, 5xx, 429) changes no object, so no event would bring the cluster
// back: the watchdog retries it with backoff until it succeeds, then stops.
func TestWatchdogRetriesAFailedDelete(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := cluster("ml", "rc")
	s := state.Snapshot{Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{evicted(head(c, "rc-head"))},
		Blind: []state.Gap{{Resource: "deployments", Reason: "not watched"}, {Resource: "nodes", Reason: "not watched"}}}
	del := &countingDeleter{failures: 2}
	w := startWatchdog(t, s, del, clk, false)
	w.Changed(types.NamespacedName{Namespace: "ml", Name: "rc"})
	waitCalls(t, del, 1)
	for want := 2; want <= 3; want++ {
		clk.Step(time.Second) // more than the backoff of the first retries (5 ms, 10 ms)
		waitCalls(t, del, want)
	}
	// The third call succeeded: no more, however long it waits.
	clk.Step(time.Hour)
	waitCalls(t, del, 3)
}

// countingCache counts the examinations; it serves no cluster.
type countingCache struct {
	mu   sync.Mutex
	seen int
}

func (c *countingCache) Snapshot(types.NamespacedName, time.Time) (*state.Snapshot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen++
	return nil, false
}

// Settled is called once, after the first pass has examined every cluster queued before Run,
// and not again when the queue empties later.
func TestSettledAfterTheFirstPass(t *testing.T) {
	cache := &countingCache{}
	settled := make(chan int, 10)
	w := NewLoop(LoopConfig{Cache: cache, Workers: 2, Log: NewLogger(io.Discard, "logfmt", nil),
		Settled: func() {
			cache.mu.Lock()
			defer cache.mu.Unlock()
			settled <- cache.seen
		}})
	for i := 0; i < 50; i++ {
		w.Changed(types.NamespacedName{Namespace: "ml", Name: string(rune('a'+i%26)) + string(rune('a'+i/26))})
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	select {
	case seen := <-settled:
		if seen < 49 { // the other worker may still be on the last one
			t.Fatalf("Settled after %d of 50 examinations", seen)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Settled never called")
	}
	w.Changed(types.NamespacedName{Namespace: "ml", Name: "later"})
	time.Sleep(100 * time.Millisecond)
	if len(settled) != 0 {
		t.Fatal("Settled called again when the queue emptied later")
	}
}
