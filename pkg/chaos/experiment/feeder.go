package experiment

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// Forward is one open local tunnel to a pod's port.
type Forward interface {
	Addr() string
	Done() <-chan struct{}
	Close()
}

// EndpointsFollower hears each full set of ready endpoint pods (an experiment's tracker records
// who came and went).
type EndpointsFollower interface {
	Endpoints(names []string, at time.Time)
}

// OpenFunc opens a port-forward to port of pod (kube.Clients.PortForward in the command).
type OpenFunc func(ctx context.Context, pod string, port int) (Forward, error)

// Feeder keeps an EndpointSet equal to a Service's ready endpoints: a port-forward per ready pod,
// opened when the pod becomes ready, taken out of the set the moment it stops being ready. A
// removed pod's forward stays open until Close, so requests already on it finish instead of
// being cut (they are the pod's answers, which the report must count).
type Feeder struct {
	Set     *EndpointSet
	Open    OpenFunc
	Tracker EndpointsFollower // hears every ready set; may be nil
	Warn    io.Writer
	Now     func() time.Time

	mu       sync.Mutex
	ctx      context.Context
	wanted   map[string]int // pod -> port
	forwards map[string]Forward
	opening  map[string]bool // an Open (or its retries) in flight
	started  bool            // Update was called before
	all      []Forward
	closed   bool
}

// NewFeeder returns a Feeder whose forwards live until ctx ends or Close.
func NewFeeder(ctx context.Context, set *EndpointSet, open OpenFunc, tr EndpointsFollower, warn io.Writer) *Feeder {
	return &Feeder{Set: set, Open: open, Tracker: tr, Warn: warn, Now: time.Now, ctx: ctx,
		wanted: map[string]int{}, forwards: map[string]Forward{}, opening: map[string]bool{}}
}

// Update takes the full ready set. Every pod new to it gets a forward; a pod whose forward cannot
// be opened is left out of the probe's set and retried in the background while it stays ready
// (the error, e.g. no RBAC for pods/portforward, is returned too: the first call's caller stops
// the run on it, later callers warn). Forwards are opened without holding the lock, so Close
// never waits on a slow Open.
func (f *Feeder) Update(eps []kube.ReadyEndpoint) error {
	at := f.Now()
	names := make([]string, len(eps))
	for i, e := range eps {
		names[i] = e.Pod
	}
	if f.Tracker != nil {
		f.Tracker.Endpoints(names, at)
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	now := map[string]int{}
	for _, e := range eps {
		now[e.Pod] = e.Port
	}
	var departed []string
	for pod := range f.wanted {
		if _, ok := now[pod]; !ok {
			departed = append(departed, pod)
		}
	}
	f.wanted = now
	var toOpen []kube.ReadyEndpoint
	for _, e := range eps {
		if _, ok := f.forwards[e.Pod]; ok || f.opening[e.Pod] {
			continue
		}
		f.opening[e.Pod] = true
		toOpen = append(toOpen, e)
	}
	// A pod that left is taken out at once, unless every pod in the set leaves while new ones
	// join (a RayService switching to a new cluster): then the old pods stay until the new
	// forwards are open, as kube-proxy keeps routing to old endpoints until it has synced. Taking
	// them out first would leave the probe nowhere to send for the milliseconds a port-forward
	// takes to open, and count requests as no-endpoint that no client would have seen fail.
	allLeave := len(f.forwards) > 0
	for pod := range f.forwards {
		if _, stays := now[pod]; stays {
			allLeave = false
		}
	}
	makeBeforeBreak := allLeave && len(toOpen) > 0
	if !makeBeforeBreak {
		f.removeLocked(departed)
	}
	f.mu.Unlock()
	if makeBeforeBreak {
		defer func() {
			f.mu.Lock()
			f.removeLocked(departed)
			f.mu.Unlock()
		}()
	}

	first := !f.started
	f.started = true
	var errs []error
	for _, e := range toOpen {
		fw, err := f.Open(f.ctx, e.Pod, e.Port)
		if err != nil {
			errs = append(errs, err)
			if first {
				// The run stops on the first update's error: nothing to retry for.
				f.mu.Lock()
				delete(f.opening, e.Pod)
				f.mu.Unlock()
			} else {
				go f.retry(e.Pod)
			}
			continue
		}
		f.install(e.Pod, fw)
	}
	return oneError(errs)
}

// removeLocked takes pods out of the set; the caller holds f.mu. A pod that is wanted again
// (it came back meanwhile) stays.
func (f *Feeder) removeLocked(pods []string) {
	for _, pod := range pods {
		if _, back := f.wanted[pod]; back {
			continue
		}
		f.Set.RemoveEndpoint(pod)
		delete(f.forwards, pod)
	}
}

// oneError keeps the error one line: the first, and how many pods failed the same way or not.
func oneError(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	if len(errs) == 2 {
		return fmt.Errorf("%w (and 1 more pod)", errs[0])
	}
	return fmt.Errorf("%w (and %d more pods)", errs[0], len(errs)-1)
}

// install puts an opened forward into the set, unless the pod stopped being wanted meanwhile or
// the feeder closed (then the forward is closed at once).
func (f *Feeder) install(pod string, fw Forward) {
	f.mu.Lock()
	delete(f.opening, pod)
	if _, want := f.wanted[pod]; !want || f.closed {
		f.mu.Unlock()
		fw.Close()
		return
	}
	f.forwards[pod] = fw
	f.all = append(f.all, fw)
	f.Set.AddEndpoint(probe.Target{Name: pod, BaseURL: "http://" + fw.Addr()})
	f.mu.Unlock()
	go f.reopenOnLoss(pod, fw)
}

// reopenOnLoss replaces a forward whose connection to the pod was lost while the pod is still
// ready. The pod stays in the set meanwhile, so requests in between are recorded as refused:
// the report shows the gap, it is not hidden.
func (f *Feeder) reopenOnLoss(pod string, fw Forward) {
	select {
	case <-fw.Done():
	case <-f.ctx.Done():
		return
	}
	f.mu.Lock()
	_, want := f.wanted[pod]
	lost := want && !f.closed && f.forwards[pod] == fw && !f.opening[pod]
	if lost {
		f.opening[pod] = true
	}
	f.mu.Unlock()
	if !lost || f.ctx.Err() != nil {
		return
	}
	fmt.Fprintf(f.Warn, "warning: the port-forward to pod %s was lost; reopening it\n", pod)
	f.retry(pod)
}

// Backoff of retried opens: a lost connection (an API server restart, a reset stream) usually
// comes back within seconds, and a healthy pod must not be blamed for the rest of the run.
const (
	retryFirst = 200 * time.Millisecond
	retryMax   = 2 * time.Second
)

// retry opens a forward to pod, with backoff, for as long as the pod is ready and the feeder
// open. The caller has marked pod as opening.
func (f *Feeder) retry(pod string) {
	wait, warned := retryFirst, false
	for {
		select {
		case <-time.After(wait):
		case <-f.ctx.Done():
			return
		}
		f.mu.Lock()
		port, want := f.wanted[pod]
		closed := f.closed
		if !want || closed {
			delete(f.opening, pod)
		}
		f.mu.Unlock()
		if !want || closed {
			return
		}
		fw, err := f.Open(f.ctx, pod, port)
		if err == nil {
			f.install(pod, fw)
			return
		}
		if !warned {
			fmt.Fprintf(f.Warn, "warning: cannot open a port-forward to pod %s yet (%v); retrying while it is ready\n", pod, err)
			warned = true
		}
		wait = min(wait*2, retryMax)
	}
}

// Close closes every forward ever opened.
func (f *Feeder) Close() {
	f.mu.Lock()
	f.closed = true
	all := f.all
	f.all = nil
	f.mu.Unlock()
	for _, fw := range all {
		fw.Close()
	}
}
