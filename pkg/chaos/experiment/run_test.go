package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// fakeTracker records what Run tells it; back() plays the watches seeing the cluster back.
type fakeTracker struct {
	mu        sync.Mutex
	disrupted []string
	refused   []string
	endpoints [][]string
	backAt    time.Time
}

func (f *fakeTracker) Disrupted(what string, _ time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.disrupted = append(f.disrupted, what)
}

func (f *fakeTracker) Refused(detail string, _ time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refused = append(f.refused, detail)
}

func (f *fakeTracker) Endpoints(names []string, _ time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.endpoints = append(f.endpoints, names)
}

func (f *fakeTracker) Pod(*corev1.Pod, bool, time.Time)              {}
func (f *fakeTracker) RayCluster(*rayv1.RayCluster, bool, time.Time) {}
func (f *fakeTracker) RayService(*rayv1.RayService, time.Time)       {}

func (f *fakeTracker) back(at time.Time) { f.mu.Lock(); f.backAt = at; f.mu.Unlock() }

func (f *fakeTracker) Recovered() (bool, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.backAt.IsZero(), f.backAt
}

func (f *fakeTracker) State() string {
	if ok, _ := f.Recovered(); ok {
		return "back"
	}
	return "disrupted"
}

func (f *fakeTracker) steps() ([]string, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.disrupted...), append([]string(nil), f.refused...)
}

func testPlan(eps probe.Endpoints, step func(context.Context) error) Disruption {
	return Disruption{Probe: probe.Config{Rate: 100, Timeout: time.Second}, Endpoints: eps, Warmup: 200 * time.Millisecond,
		After: 300 * time.Millisecond, What: "delete", Step: step, Tracker: &fakeTracker{}}
}

func TestRunTakesTheStepAfterAHealthyWarmup(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { n.Add(1) }))
	defer srv.Close()
	var killedAt atomic.Int64 // requests answered when the kill came
	var killTime atomic.Pointer[time.Time]
	p := testPlan(probe.NewURL("x", srv.URL), func(context.Context) error {
		now := time.Now()
		killTime.Store(&now)
		killedAt.Store(n.Load())
		return nil
	})
	out := Run(context.Background(), p)
	if !out.Disrupted || out.WarmupFailed || out.StepErr != nil || out.Probe.Stopped {
		t.Fatalf("outcome %+v", out)
	}
	// --after (300 ms) counts from the kill, not from the schedule's start: the warm-up's
	// drain and the kill call do not eat into it.
	recs := out.Probe.Records
	killAt := killTime.Load().Sub(out.Probe.Start)
	last := recs[len(recs)-1].Scheduled
	if last < killAt+p.After-10*time.Millisecond || last >= killAt+p.After {
		t.Fatalf("last request scheduled at %s, kill at %s: want the schedule to end %s after the kill", last, killAt, p.After)
	}
	// The schedule is open-loop (one request every 10 ms from the start) and goes on through the
	// warm-up's drain and the kill, so how many requests it made follows from when the kill came:
	// every slot up to the kill plus --after, and each one answered. A loaded machine delays the
	// kill, not the count's rule.
	slot := time.Second / time.Duration(p.Probe.Rate)
	want := int((killAt + p.After + slot - 1) / slot)
	if got := len(recs); got < want-1 || got > want+1 || int64(got) != n.Load() {
		t.Fatalf("records %d, server %d, want %d±1 (a request every %s until %s after the kill at %s)", got, n.Load(), want, slot, p.After, killAt)
	}
	if k := killedAt.Load(); k < 20 {
		t.Fatalf("killed after %d answers: before the 20 warm-up requests finished", k)
	}
	if out.Warmup.OK < 20 {
		t.Fatalf("warm-up counters %+v", out.Warmup)
	}
	if d, _ := p.Tracker.(*fakeTracker).steps(); len(d) != 1 || d[0] != "delete" {
		t.Fatalf("the tracker heard %v, want the step once, as delete", d)
	}
}

func TestRunWarmupFailureTakesNoStep(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	defer srv.Close()
	var kills atomic.Int64
	p := testPlan(probe.NewURL("x", srv.URL), func(context.Context) error { kills.Add(1); return nil })
	out := Run(context.Background(), p)
	if !out.WarmupFailed || kills.Load() != 0 || out.Disrupted {
		t.Fatalf("warm-up of 502s: outcome %+v, kills %d", out, kills.Load())
	}
	// Stopped at the failed warm-up: no request was scheduled in what would have been the
	// window after the step (a loaded machine may stop it late, never that late).
	recs := out.Probe.Records
	if !out.Probe.Stopped || len(recs) == 0 || recs[len(recs)-1].Scheduled >= p.Warmup+p.After {
		t.Fatalf("the probe went on after the failed warm-up: %d records, stopped %v", len(recs), out.Probe.Stopped)
	}
	// The error's counts are the report's: every request of the run, none left out.
	if n := out.Warmup.Requests(); n != int64(len(out.Probe.Records)) || out.Warmup.Errors() != n {
		t.Fatalf("warm-up counters %+v, want all %d requests of the run, all failed", out.Warmup, len(out.Probe.Records))
	}
	if d, _ := p.Tracker.(*fakeTracker).steps(); len(d) != 0 {
		t.Fatalf("the tracker heard the step %v, which was not taken", d)
	}
}

func TestRunRefusedStepStops(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	refused := &kube.Refused{Pod: "h", Code: 429, Message: "Cannot evict pod as it would violate the pod's disruption budget."}
	p := testPlan(probe.NewURL("x", srv.URL), func(context.Context) error { return refused })
	out := Run(context.Background(), p)
	if !errors.Is(out.StepErr, refused) || out.Disrupted || !out.Probe.Stopped {
		t.Fatalf("outcome %+v", out)
	}
	if _, r := p.Tracker.(*fakeTracker).steps(); len(r) != 1 || !strings.Contains(r[0], "(429)") {
		t.Fatalf("the tracker heard the refusal as %v", r)
	}
}

// TestRunUntilRecovered: the kill "replaces" the head; the probe stops once the new head is
// Ready and no request failed for RecoveredQuiet, long before the timeout.
func TestRunUntilRecovered(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	var p Disruption
	p = testPlan(probe.NewURL("x", srv.URL), func(context.Context) error {
		go func() {
			time.Sleep(100 * time.Millisecond)
			p.Tracker.(*fakeTracker).back(time.Now())
		}()
		return nil
	})
	p.UntilRecovered, p.Timeout = true, 20*time.Second
	var progress []string
	var mu sync.Mutex
	p.Progress = func(l probe.Live, head string) { mu.Lock(); progress = append(progress, head); mu.Unlock() }
	p.ProgressEvery = 100 * time.Millisecond
	start := time.Now()
	out := Run(context.Background(), p)
	if !out.Recovered || !out.Probe.Stopped {
		t.Fatalf("outcome %+v", out)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s to see recovery", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if last := progress[len(progress)-1]; last != "back" {
		t.Fatalf("last progress %q", last)
	}
}

func TestRunCtrlCReturnsWhatWasSeen(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	p := testPlan(probe.NewURL("x", srv.URL), func(context.Context) error {
		go func() { time.Sleep(100 * time.Millisecond); cancel() }()
		return nil
	})
	p.After = time.Hour
	out := Run(ctx, p)
	if !out.Probe.Interrupted || !out.Disrupted || len(out.Probe.Records) < 20 {
		t.Fatalf("outcome %+v with %d records", out, len(out.Probe.Records))
	}
}

// fakeForward is a Forward to an httptest server.
type fakeForward struct {
	addr string
	done chan struct{}
	once sync.Once
}

func (f *fakeForward) Addr() string          { return f.addr }
func (f *fakeForward) Done() <-chan struct{} { return f.done }
func (f *fakeForward) Close()                { f.once.Do(func() { close(f.done) }) }

func TestFeederFollowsReadySet(t *testing.T) {
	hits := map[string]*atomic.Int64{}
	servers := map[string]*httptest.Server{}
	for _, pod := range []string{"head", "worker", "head-2"} {
		c := &atomic.Int64{}
		hits[pod] = c
		servers[pod] = httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { c.Add(1) }))
		defer servers[pod].Close()
	}
	var opened []string
	var forwards []*fakeForward
	open := func(_ context.Context, pod string, port int) (Forward, error) {
		if pod == "forbidden" {
			return nil, errors.New("forbidden: you cannot create pods/portforward")
		}
		opened = append(opened, pod)
		f := &fakeForward{addr: strings.TrimPrefix(servers[pod].URL, "http://"), done: make(chan struct{})}
		forwards = append(forwards, f)
		return f, nil
	}
	set := NewEndpointSet(RoundRobin, 1)
	tr := &fakeTracker{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := NewFeeder(ctx, set, open, tr, io.Discard)
	if err := f.Update([]kube.ReadyEndpoint{{Pod: "head", Port: 8000}, {Pod: "worker", Port: 8000}}); err != nil {
		t.Fatal(err)
	}
	probe.New(probe.Config{Rate: 200}, set).Run(ctx, 50*time.Millisecond)
	if err := f.Update([]kube.ReadyEndpoint{{Pod: "worker", Port: 8000}, {Pod: "head-2", Port: 8000}}); err != nil {
		t.Fatal(err)
	}
	probe.New(probe.Config{Rate: 200}, set).Run(ctx, 50*time.Millisecond)
	if hits["head"].Load() != 5 || hits["worker"].Load() != 10 || hits["head-2"].Load() != 5 {
		t.Fatalf("hits head %d worker %d head-2 %d, want 5 10 5", hits["head"].Load(), hits["worker"].Load(), hits["head-2"].Load())
	}
	if strings.Join(opened, ",") != "head,worker,head-2" {
		t.Fatalf("opened %v: a pod still ready must keep its forward", opened)
	}
	// The removed head's forward stays open until Close, so its in-flight requests finish.
	select {
	case <-forwards[0].done:
		t.Fatal("the removed pod's forward was closed before Close")
	default:
	}
	if err := f.Update([]kube.ReadyEndpoint{{Pod: "forbidden", Port: 8000}}); err == nil {
		t.Fatal("an open error was swallowed")
	}
	f.Close()
	for _, fw := range forwards {
		select {
		case <-fw.done:
		default:
			t.Fatalf("forward %s left open after Close", fw.addr)
		}
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if got := fmt.Sprint(tr.endpoints); !strings.HasPrefix(got, "[[head worker] [worker head-2]") {
		t.Fatalf("the tracker heard the ready sets %s, want [head worker] then [worker head-2] first", got)
	}
}
