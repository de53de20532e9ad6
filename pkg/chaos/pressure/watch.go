package pressure

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// watchSelector is what the target's watch follows: for a head, every head of its cluster (the
// replacement too); else the pod by name (a field selector).
func watchSelector(pod *corev1.Pod) string {
	if !ray.IsHead(pod) {
		return ""
	}
	return ray.HeadSelector(pod.Labels[ray.LabelCluster])
}

// stream is one watch the run follows, resumed from the last version seen when the server ends
// it (timeouts, compaction).
type stream struct {
	what string // what is lost without it, for the warning when it cannot be opened or resumed
	open func(ctx context.Context, rv string) (watch.Interface, error)
	w    watch.Interface
	rv   string
}

func (s *stream) events() <-chan watch.Event {
	if s == nil {
		return nil
	}
	return s.w.ResultChan()
}

func (s *stream) stop() {
	if s != nil {
		s.w.Stop()
	}
}

// watches are the run's streams, all opened before the injection so that no event is missed. The
// target's is required (a refusal injects nothing); the others are optional: each one refused is
// one warning line, and the run goes on without it.
type watches struct {
	target, node, nodePods, events *stream
}

func (ws *watches) stop() {
	for _, s := range []*stream{ws.target, ws.node, ws.nodePods, ws.events} {
		s.stop()
	}
}

// openWatches opens the target's watch from the version read and the optional ones.
func openWatches(ctx context.Context, c Cluster, s Settings, pod *corev1.Pod, n Neighbours) (*watches, error) {
	selector := watchSelector(pod)
	ws := &watches{}
	var err error
	ws.target, err = openStream(ctx, "", pod.ResourceVersion, func(ctx context.Context, rv string) (watch.Interface, error) {
		return c.WatchTargetPods(ctx, pod.Namespace, selector, pod.Name, rv)
	})
	if err != nil {
		return nil, err
	}
	node := pod.Spec.NodeName
	if node == "" {
		return ws, nil
	}
	optional := func(what, rv string, open func(ctx context.Context, rv string) (watch.Interface, error)) *stream {
		st, err := openStream(ctx, what, rv, open)
		if err != nil {
			warn(s.Warn, "%s; %s", err, what)
			return nil
		}
		return st
	}
	ws.node = optional("the timeline will not show node pressure", "", func(ctx context.Context, _ string) (watch.Interface, error) {
		return c.WatchNodeNamed(ctx, node)
	})
	if n.Listed {
		// The node's pods where the LIST could look, from its version: what changes from now on.
		ws.nodePods = optional("bystanders the kubelet evicts on node "+node+" will not be reported", n.ResourceVersion, func(ctx context.Context, rv string) (watch.Interface, error) {
			return c.WatchPodsOnNode(ctx, n.Namespace, node, rv)
		})
	}
	// The kubelet's Evicted Events across namespaces, else in the target's.
	lost := "an eviction the kubelet records only in its Evicted Event (a pod left Succeeded, without a DisruptionTarget condition) will not be recognised"
	for _, ns := range []string{"", pod.Namespace} {
		st, err := openStream(ctx, lost, "", func(ctx context.Context, rv string) (watch.Interface, error) {
			return c.WatchEvictionEvents(ctx, ns, rv)
		})
		if err == nil {
			ws.events = st
			break
		}
		if fault.KindOf(err) != fault.Forbidden || ns != "" {
			warn(s.Warn, "%s; %s", err, lost)
			break
		}
	}
	return ws, nil
}

func openStream(ctx context.Context, what, rv string, open func(ctx context.Context, rv string) (watch.Interface, error)) (*stream, error) {
	w, err := open(ctx, rv)
	if err != nil {
		return nil, err
	}
	return &stream{what: what, open: open, w: w, rv: rv}, nil
}

// evictionWatch follows the run's watches, writing each event to out as it is seen, until the
// timeline is done or the timeout.
type evictionWatch struct {
	s   Settings
	tl  *Timeline
	ws  *watches
	out io.Writer
	// c and memory: a memory run also reads its container's log for the ramp (ramp.go).
	c      Cluster
	memory bool
	logs   chan string
}

func (w *evictionWatch) run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, w.s.Timeout)
	defer cancel()
	if w.memory && w.c != nil {
		w.logs = make(chan string, 1)
		go followRamp(ctx, w.c, w.tl.Namespace, w.tl.Pod, w.tl.Container, w.logs)
	}
	printed := 0
	flush := func() {
		lines := w.tl.Lines()
		for _, l := range lines[printed:] {
			fmt.Fprintln(w.out, l)
		}
		printed = len(lines)
	}
	flush()
	// The clock moves the timeline on by itself only for EvidenceGrace.
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for !w.tl.Done() {
		_, err := w.next(ctx, tick.C)
		if ctx.Err() != nil {
			return nil // the timeout: the verdict says what was seen
		}
		if err != nil {
			return err
		}
		flush()
	}
	// What the watches had already delivered when the run was done belongs to it: a bystander
	// evicted in the same second as the target, say.
	for took, err := w.next(ctx, nil); took && err == nil; took, err = w.next(ctx, nil) {
	}
	flush()
	return nil
}

// next takes one event of any watch. With tick it waits for one, a tick (which lets the
// timeline's clock move) or the end of ctx; with none it takes only one already delivered, and
// took says whether there was one.
func (w *evictionWatch) next(ctx context.Context, tick <-chan time.Time) (took bool, err error) {
	ws := w.ws
	var sp **stream
	var ev watch.Event
	var ok bool
	if tick == nil {
		select {
		case ev, ok = <-ws.target.events():
			sp = &ws.target
		case ev, ok = <-ws.node.events():
			sp = &ws.node
		case ev, ok = <-ws.nodePods.events():
			sp = &ws.nodePods
		case ev, ok = <-ws.events.events():
			sp = &ws.events
		case log := <-w.logs:
			w.tl.ObserveLog(log, w.s.Now())
			return true, nil
		default:
		}
		if sp == nil || !ok {
			return false, nil
		}
	} else {
		select {
		case <-ctx.Done():
			return false, nil
		case <-tick:
			w.tl.Tick(w.s.Now())
			return false, nil
		case log := <-w.logs:
			w.tl.ObserveLog(log, w.s.Now())
			return false, nil
		case ev, ok = <-ws.target.events():
			sp = &ws.target
		case ev, ok = <-ws.node.events():
			sp = &ws.node
		case ev, ok = <-ws.nodePods.events():
			sp = &ws.nodePods
		case ev, ok = <-ws.events.events():
			sp = &ws.events
		}
	}
	return true, w.take(ctx, sp, ev, ok)
}

// observe hands what the watch s delivered to the timeline.
func (w *evictionWatch) observe(s *stream, obj any, deleted bool) {
	now := w.s.Now()
	switch o := obj.(type) {
	case *corev1.Node:
		w.tl.ObserveNode(o, now)
	case *corev1.Event:
		w.tl.ObserveEvent(o, now)
	case *corev1.Pod:
		if s == w.ws.target {
			w.tl.ObservePod(o, deleted, now)
		} else {
			w.tl.ObserveNodePod(o, deleted, now)
		}
	}
}

// take hands one event of *sp to observe, and resumes the watch when the server ended it. The
// target's watch failing to resume ends the run with the error; another is dropped with a
// warning.
func (w *evictionWatch) take(ctx context.Context, sp **stream, ev watch.Event, ok bool) error {
	s := *sp
	if ok && !isExpired(ev) {
		if a, err := meta.Accessor(ev.Object); err == nil && a.GetResourceVersion() != "" {
			s.rv = a.GetResourceVersion()
		}
		if ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted {
			w.observe(s, ev.Object, ev.Type == watch.Deleted)
		}
		return nil
	}
	s.w.Stop()
	if ok {
		s.rv = "" // expired: from now
	}
	nw, err := s.open(ctx, s.rv)
	if err == nil {
		s.w = nw
		return nil
	}
	if s == w.ws.target {
		s.w = watch.NewEmptyWatch()
		return err
	}
	if ctx.Err() == nil {
		warn(w.s.Warn, "%s; %s", err, s.what)
	}
	*sp = nil
	return nil
}

func isExpired(ev watch.Event) bool {
	st, ok := ev.Object.(*metav1.Status)
	return ev.Type == watch.Error && ok && (st.Code == http.StatusGone || st.Reason == metav1.StatusReasonExpired)
}

func warn(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, "warning: "+format+"\n", a...)
	}
}
