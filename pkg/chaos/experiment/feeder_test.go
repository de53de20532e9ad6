package experiment

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// flakyOpener fails a pod's first failures[pod] opens, then opens a fakeForward; every open is
// counted. block, when set, makes an open of that pod wait for ctx.
type flakyOpener struct {
	mu       sync.Mutex
	failures map[string]int
	opens    map[string]int
	last     map[string]*fakeForward
	block    string
}

func newFlakyOpener(failures map[string]int) *flakyOpener {
	return &flakyOpener{failures: failures, opens: map[string]int{}, last: map[string]*fakeForward{}}
}

func (o *flakyOpener) open(ctx context.Context, pod string, _ int) (Forward, error) {
	if pod == o.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.opens[pod]++
	if o.opens[pod] <= o.failures[pod] {
		return nil, errors.New("connection reset")
	}
	f := &fakeForward{addr: "127.0.0.1:1", done: make(chan struct{})}
	o.last[pod] = f
	return f, nil
}

func (o *flakyOpener) forward(pod string) *fakeForward {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.last[pod]
}

func eventuallyNames(t *testing.T, set *EndpointSet, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := set.Names()
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("probe set %v, want %v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// One pod whose forward fails to open does not keep the pods after it out of the probe; it is
// retried while it stays ready, and joins once it opens.
//
// (The first update is different: its error stops the run, so nothing is retried; see
// TestFeederFirstUpdateErrorIsOneLine.)
func TestFeederOpensEveryPodAndRetriesAFailedOne(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	op := newFlakyOpener(map[string]int{"b": 2})
	set := NewEndpointSet(RoundRobin, 1)
	f := NewFeeder(ctx, set, op.open, nil, io.Discard)
	defer f.Close()
	// The first update's forwards must all open (the run stops on its error); later ones are
	// best effort.
	if err := f.Update([]kube.ReadyEndpoint{{Pod: "a", Port: 8000}}); err != nil {
		t.Fatal(err)
	}
	err := f.Update([]kube.ReadyEndpoint{{Pod: "a", Port: 8000}, {Pod: "b", Port: 8000}, {Pod: "c", Port: 8000}})
	if err == nil {
		t.Fatal("the failed open was not reported")
	}
	if got := set.Names(); !slices.Contains(got, "a") || !slices.Contains(got, "c") {
		t.Fatalf("probe set %v right after the update: a and c must be in it", got)
	}
	eventuallyNames(t, set, "a", "b", "c")
}

// A lost forward is reopened however many attempts it takes while the pod is ready (an API
// server restart can take seconds), not given up after a few.
func TestFeederReopensALostForwardUntilItOpens(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	op := newFlakyOpener(map[string]int{})
	set := NewEndpointSet(RoundRobin, 1)
	f := NewFeeder(ctx, set, op.open, nil, io.Discard)
	defer f.Close()
	if err := f.Update([]kube.ReadyEndpoint{{Pod: "a", Port: 8000}}); err != nil {
		t.Fatal(err)
	}
	first := op.forward("a")
	op.mu.Lock()
	op.failures["a"] = 1 + 4 // the first open succeeded; the next four fail (more than the old limit of 3)
	op.mu.Unlock()
	first.Close() // the connection to the pod is lost
	deadline := time.Now().Add(15 * time.Second)
	for op.forward("a") == first {
		if time.Now().After(deadline) {
			t.Fatal("the lost forward was never reopened")
		}
		time.Sleep(10 * time.Millisecond)
	}
	op.mu.Lock()
	opens := op.opens["a"]
	op.mu.Unlock()
	if opens != 6 {
		t.Fatalf("%d opens, want 6 (1 + 4 failed + 1)", opens)
	}
	eventuallyNames(t, set, "a")
}

// Close does not wait for an Open that hangs (Ctrl-C while the first port-forward is opening).
func TestFeederCloseDoesNotWaitForAHangingOpen(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	op := newFlakyOpener(nil)
	op.block = "slow"
	f := NewFeeder(ctx, NewEndpointSet(RoundRobin, 1), op.open, nil, io.Discard)
	updated := make(chan error, 1)
	go func() { updated <- f.Update([]kube.ReadyEndpoint{{Pod: "slow", Port: 8000}}) }()
	time.Sleep(50 * time.Millisecond)
	closed := make(chan struct{})
	go func() { f.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited on an Open in flight")
	}
	cancel() // what the command does next: the watches' context ends, and the Open with it
	select {
	case <-updated:
	case <-time.After(5 * time.Second):
		t.Fatal("Update did not return once the context ended")
	}
}

// The first update's error ends the run as one line, however many pods failed, and starts no
// retry that could print after it.
func TestFeederFirstUpdateErrorIsOneLine(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	op := newFlakyOpener(map[string]int{"a": 100, "b": 100})
	var warn strings.Builder
	f := NewFeeder(ctx, NewEndpointSet(RoundRobin, 1), op.open, nil, &warn)
	defer f.Close()
	err := f.Update([]kube.ReadyEndpoint{{Pod: "a", Port: 8000}, {Pod: "b", Port: 8000}})
	if err == nil || strings.Contains(err.Error(), "\n") || err.Error() != "connection reset (and 1 more pod)" {
		t.Fatalf("err = %q, want one line", err)
	}
	time.Sleep(500 * time.Millisecond) // longer than the first retry's wait
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.opens["a"] != 1 || op.opens["b"] != 1 || warn.Len() != 0 {
		t.Fatalf("opens %v, warnings %q: the first update's failures must not be retried", op.opens, warn.String())
	}
}

// When every pod of the set leaves while new ones join (a RayService switching clusters), the old
// pods keep taking requests until the new forwards are open, so the probe is never left with no
// endpoint; then only the new pods remain. A pod that leaves while others stay goes at once.
func TestFeederSwitchesWholeSetMakeBeforeBreak(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	set := NewEndpointSet(RoundRobin, 1)
	var during []string
	open := func(_ context.Context, pod string, _ int) (Forward, error) {
		if pod == "new" {
			during = set.Names()
		}
		return &fakeForward{addr: pod, done: make(chan struct{})}, nil
	}
	f := NewFeeder(ctx, set, open, nil, io.Discard)
	defer f.Close()
	if err := f.Update([]kube.ReadyEndpoint{{Pod: "old-a", Port: 8000}, {Pod: "old-b", Port: 8000}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Update([]kube.ReadyEndpoint{{Pod: "old-a", Port: 8000}}); err != nil {
		t.Fatal(err)
	}
	if got := set.Names(); !slices.Equal(got, []string{"old-a"}) {
		t.Fatalf("a pod leaving while another stays: set %v, want [old-a]", got)
	}
	if err := f.Update([]kube.ReadyEndpoint{{Pod: "new", Port: 8000}}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(during, []string{"old-a"}) {
		t.Errorf("while the new forward opened the set was %v, want [old-a]", during)
	}
	if got := set.Names(); !slices.Equal(got, []string{"new"}) {
		t.Errorf("after the switch: set %v, want [new]", got)
	}
}
