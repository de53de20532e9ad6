package headkill

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

// OpenFunc opens a port-forward to port of pod (kube.Clients.PortForward in the command).
type OpenFunc func(ctx context.Context, pod string, port int) (Forward, error)

// Feeder keeps a probe.Set equal to a Service's ready endpoints: a port-forward per ready pod,
// opened when the pod becomes ready, taken out of the set the moment it stops being ready. A
// removed pod's forward stays open until Close, so requests already on it finish instead of
// being cut (they are the pod's answers, which the report must count).
type Feeder struct {
	Set     *probe.Set
	Open    OpenFunc
	Tracker *Tracker // hears every ready set; may be nil
	Warn    io.Writer
	Now     func() time.Time

	mu       sync.Mutex
	ctx      context.Context
	wanted   map[string]int // pod -> port
	forwards map[string]Forward
	all      []Forward
	closed   bool
}

// NewFeeder returns a Feeder whose forwards live until ctx ends or Close.
func NewFeeder(ctx context.Context, set *probe.Set, open OpenFunc, tr *Tracker, warn io.Writer) *Feeder {
	return &Feeder{Set: set, Open: open, Tracker: tr, Warn: warn, Now: time.Now, ctx: ctx,
		wanted: map[string]int{}, forwards: map[string]Forward{}}
}

// Update takes the full ready set. The first call's forwards must all open (the error is
// returned, e.g. no RBAC for pods/portforward); later failures are warned about and the pod is
// left out of the set.
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
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	now := map[string]int{}
	for _, e := range eps {
		now[e.Pod] = e.Port
	}
	for pod := range f.wanted {
		if _, ok := now[pod]; !ok {
			f.Set.RemoveEndpoint(pod)
			delete(f.forwards, pod)
		}
	}
	f.wanted = now
	for _, e := range eps {
		if _, ok := f.forwards[e.Pod]; ok {
			continue
		}
		fw, err := f.Open(f.ctx, e.Pod, e.Port)
		if err != nil {
			return err
		}
		f.forwards[e.Pod] = fw
		f.all = append(f.all, fw)
		f.Set.AddEndpoint(probe.Target{Name: e.Pod, BaseURL: "http://" + fw.Addr()})
		go f.reopenOnLoss(e.Pod, fw)
	}
	return nil
}

// reopenOnLoss replaces a forward whose connection to the pod was lost while the pod is still
// ready. Requests in between are recorded as refused: the report shows the gap, it is not hidden.
func (f *Feeder) reopenOnLoss(pod string, fw Forward) {
	select {
	case <-fw.Done():
	case <-f.ctx.Done():
		return
	}
	for attempt := 0; attempt < 3; attempt++ {
		f.mu.Lock()
		port, want := f.wanted[pod]
		still := f.forwards[pod] == fw
		closed := f.closed
		f.mu.Unlock()
		if !want || !still || closed || f.ctx.Err() != nil {
			return
		}
		fmt.Fprintf(f.Warn, "warning: the port-forward to pod %s was lost; reopening it\n", pod)
		nfw, err := f.Open(f.ctx, pod, port)
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		f.mu.Lock()
		if f.closed || f.forwards[pod] != fw {
			f.mu.Unlock()
			nfw.Close()
			return
		}
		f.forwards[pod] = nfw
		f.all = append(f.all, nfw)
		f.Set.AddEndpoint(probe.Target{Name: pod, BaseURL: "http://" + nfw.Addr()})
		f.mu.Unlock()
		go f.reopenOnLoss(pod, nfw)
		return
	}
	fmt.Fprintf(f.Warn, "warning: cannot reopen the port-forward to pod %s; its requests now fail\n", pod)
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
