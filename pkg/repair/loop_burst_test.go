package repair

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// manyCache serves one snapshot per cluster; like an informer, it keeps showing a deleted head
// until the deletion lands (here: never).
type manyCache map[types.NamespacedName]state.Snapshot

func (c manyCache) Snapshot(key types.NamespacedName, now time.Time) (*state.Snapshot, bool) {
	s, ok := c[key]
	if !ok {
		return nil, false
	}
	s.Now = now
	return &s, true
}

// slowDeleter takes a while per delete, as an API server does, and counts deletes per pod UID
// and how many were in flight at once.
type slowDeleter struct {
	mu                  sync.Mutex
	byUID               map[types.UID]int
	inFlight, maxFlight int
}

func (d *slowDeleter) DeletePod(_ context.Context, _, _ string, uid types.UID, _ string, _ *int64, _ bool) error {
	d.mu.Lock()
	d.byUID[uid]++
	d.inFlight++
	d.maxFlight = max(d.maxFlight, d.inFlight)
	d.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	d.mu.Lock()
	d.inFlight--
	d.mu.Unlock()
	return nil
}

func (d *slowDeleter) total() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, k := range d.byUID {
		n += k
	}
	return n
}

// A node dies with 200 heads of 200 clusters on it; every cluster is reported changed three times
// while the deletes are in flight (the eviction, the kubelet's next status write, the delete
// itself), as informers do. The workers delete concurrently, and each head exactly once.
func TestWatchdogBurstDeletesEachHeadOnce(t *testing.T) {
	const n, workers = 200, 8
	cache := manyCache{}
	var keys []types.NamespacedName
	for i := 0; i < n; i++ {
		c := cluster("ml", fmt.Sprintf("rc%03d", i))
		key := types.NamespacedName{Namespace: "ml", Name: c.Name}
		cache[key] = state.Snapshot{Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{evicted(head(c, c.Name+"-head"))},
			Blind: []state.Gap{{Resource: "deployments", Reason: "not watched"}, {Resource: "nodes", Reason: "not watched"}}}
		keys = append(keys, key)
	}
	del := &slowDeleter{byUID: map[types.UID]int{}}
	rules := diagnose.DefaultOptions()
	w := NewLoop(LoopConfig{
		Cache:    cache,
		Diagnose: func(s *state.Snapshot) []diagnose.Finding { return diagnose.Diagnose(s, rules).Findings },
		Exec:     &Executor{Deleter: del, Events: noEvents{}},
		Log:      NewLogger(io.Discard, "logfmt", time.Now),
		Workers:  workers,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for round := 0; round < 3; round++ {
		for _, k := range keys {
			w.Changed(k)
		}
		time.Sleep(20 * time.Millisecond)
	}
	deadline := time.Now().Add(10 * time.Second)
	for del.total() < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for _, k := range keys { // and once more after every delete: still nothing new
		w.Changed(k)
	}
	time.Sleep(200 * time.Millisecond)
	del.mu.Lock()
	defer del.mu.Unlock()
	if len(del.byUID) != n {
		t.Errorf("%d heads deleted, want %d", len(del.byUID), n)
	}
	for uid, k := range del.byUID {
		if k != 1 {
			t.Errorf("%s deleted %d times", uid, k)
		}
	}
	if del.maxFlight < 2 || del.maxFlight > workers {
		t.Errorf("at most %d deletes in flight; want between 2 and %d (the workers)", del.maxFlight, workers)
	}
}
