package pressure

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/follow"
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

// watches are the run's streams, all opened before the injection so that no event is missed. The
// target's is required (a refusal injects nothing); the others are optional: each one refused is
// one warning line, and the run goes on without it.
type watches struct {
	target, node, nodePods, events *follow.Stream
}

func (ws *watches) stop() {
	for _, s := range []*follow.Stream{ws.target, ws.node, ws.nodePods, ws.events} {
		s.Stop()
	}
}

// openWatches opens the target's watch from the version read and the optional ones.
func openWatches(ctx context.Context, c Cluster, s Settings, pod *corev1.Pod, n Neighbours) (*watches, error) {
	selector := watchSelector(pod)
	ws := &watches{}
	var err error
	ws.target, err = follow.Open(ctx, "", pod.ResourceVersion, func(ctx context.Context, rv string) (watch.Interface, error) {
		return c.WatchTargetPods(ctx, pod.Namespace, selector, pod.Name, rv)
	})
	if err != nil {
		return nil, err
	}
	node := pod.Spec.NodeName
	if node == "" {
		return ws, nil
	}
	optional := func(what, rv string, open follow.OpenFunc) *follow.Stream {
		st, err := follow.Open(ctx, what, rv, open)
		if err != nil {
			follow.Warn(s.Warn, "%s; %s", err, what)
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
		st, err := follow.Open(ctx, lost, "", func(ctx context.Context, rv string) (watch.Interface, error) {
			return c.WatchEvictionEvents(ctx, ns, rv)
		})
		if err == nil {
			ws.events = st
			break
		}
		if fault.KindOf(err) != fault.Forbidden || ns != "" {
			follow.Warn(s.Warn, "%s; %s", err, lost)
			break
		}
	}
	return ws, nil
}

// run follows the streams in one follow.Set: each stream's objects go to the timeline on the
// run's clock, the timeline's own clock moves every tick, and a memory run's container log gives
// the ramp (ramp.go). Each line the timeline gains is written to out as it is seen; it ends when
// the timeline is done or at s.Timeout.
func (ws *watches) run(ctx context.Context, c Cluster, s Settings, tl *Timeline, memory bool, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	pods := func(observe func(*corev1.Pod, bool, time.Time)) func(runtime.Object, bool) {
		return func(o runtime.Object, deleted bool) {
			if p, ok := o.(*corev1.Pod); ok {
				observe(p, deleted, s.Now())
			}
		}
	}
	on(ws.target, pods(tl.ObservePod))
	on(ws.nodePods, pods(tl.ObserveNodePod))
	on(ws.node, func(o runtime.Object, _ bool) {
		if n, ok := o.(*corev1.Node); ok {
			tl.ObserveNode(n, s.Now())
		}
	})
	on(ws.events, func(o runtime.Object, _ bool) {
		if e, ok := o.(*corev1.Event); ok {
			tl.ObserveEvent(e, s.Now())
		}
	})
	set := &follow.Set{Required: ws.target, Optional: []*follow.Stream{ws.node, ws.nodePods, ws.events},
		Tick: func() { tl.Tick(s.Now()) }, Warn: s.Warn}
	if memory && c != nil {
		logs := make(chan string, 1)
		go followRamp(ctx, c, tl.Namespace, tl.Pod, tl.Container, logs)
		set.Lines, set.OnLine = logs, func(log string) { tl.ObserveLog(log, s.Now()) }
	}
	printed := 0
	flush := func() {
		lines := tl.Lines()
		for _, l := range lines[printed:] {
			fmt.Fprintln(out, l)
		}
		printed = len(lines)
	}
	return set.Until(ctx, tl.Done, flush)
}

// on sets what s hears; a stream not opened hears nothing.
func on(s *follow.Stream, f func(runtime.Object, bool)) {
	if s != nil {
		s.On = f
	}
}
