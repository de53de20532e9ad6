package pressure

import (
	"context"
	"fmt"
	"io"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// watchSelector is what the eviction watch follows: for a head, every head of its cluster (the
// replacement too); else the pod by name (a field selector).
func watchSelector(pod *corev1.Pod) string {
	if !ray.IsHead(pod) {
		return ""
	}
	return ray.HeadSelector(pod.Labels[ray.LabelCluster])
}

// evictionWatch follows the pod through pods, the watch opened before the injection (so a
// refusal to watch left nothing injected), and the pod's node, writing each event to out as it
// is seen, until the timeline is done or the timeout.
type evictionWatch struct {
	c    Cluster
	s    Settings
	tl   *Timeline
	pod  *corev1.Pod
	pods watch.Interface
	out  io.Writer
}

func (w *evictionWatch) run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, w.s.Timeout)
	defer cancel()
	printed := 0
	flush := func() {
		lines := w.tl.Lines()
		for _, l := range lines[printed:] {
			fmt.Fprintln(w.out, l)
		}
		printed = len(lines)
	}
	flush()

	selector, podRV := watchSelector(w.pod), w.pod.ResourceVersion
	var err error
	var nodes watch.Interface
	var nodeEvents <-chan watch.Event
	if w.tl.Node != "" {
		if nodes, err = w.c.WatchNodeNamed(ctx, w.tl.Node); err != nil {
			if w.s.Warn != nil {
				fmt.Fprintf(w.s.Warn, "warning: %s; the timeline will not show node pressure\n", err)
			}
		} else {
			defer func() { nodes.Stop() }()
			nodeEvents = nodes.ResultChan()
		}
	}

	for !w.tl.Done() {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.pods.ResultChan():
			if !ok || isExpired(ev) {
				// Watches end (server timeouts, compaction); resume from what was last seen.
				w.pods.Stop()
				if isExpired(ev) {
					podRV = ""
				}
				if w.pods, err = w.c.WatchTargetPods(ctx, w.pod.Namespace, selector, w.pod.Name, podRV); err != nil {
					w.pods = watch.NewEmptyWatch()
					if ctx.Err() != nil {
						return nil
					}
					return err
				}
				continue
			}
			if p, isPod := ev.Object.(*corev1.Pod); isPod {
				podRV = p.ResourceVersion
				w.tl.ObservePod(p, ev.Type == watch.Deleted, w.s.Now())
			}
		case ev, ok := <-nodeEvents:
			if !ok || isExpired(ev) {
				nodes.Stop()
				if nodes, err = w.c.WatchNodeNamed(ctx, w.tl.Node); err != nil {
					nodes, nodeEvents = watch.NewEmptyWatch(), nil
					continue
				}
				nodeEvents = nodes.ResultChan()
				continue
			}
			if n, isNode := ev.Object.(*corev1.Node); isNode {
				w.tl.ObserveNode(n, w.s.Now())
			}
		}
		flush()
	}
	return nil
}

func isExpired(ev watch.Event) bool {
	st, ok := ev.Object.(*metav1.Status)
	return ev.Type == watch.Error && ok && (st.Code == http.StatusGone || st.Reason == metav1.StatusReasonExpired)
}
