package chaos

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/pressure"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// watchEviction follows the target pod (for a head: every head of its cluster, to see the
// replacement) and its node, printing the timeline as it happens, until recovery or --timeout.
// A head evicted and not replaced in time exits CheckFailed: it is the failure under test.
// podWatchSelector is what --watch-eviction follows: for a head, every head of its cluster (the
// replacement too); else the pod by name (a field selector).
func podWatchSelector(pod *corev1.Pod) string {
	if pod.Labels[pressure.LabelNodeType] != "head" {
		return ""
	}
	return fmt.Sprintf("%s=%s,%s=head", pressure.LabelCluster, pod.Labels[pressure.LabelCluster], pressure.LabelNodeType)
}

// watchEviction follows the pod through pods, the watch opened before the injection (so a
// refusal to watch left nothing injected), and the pod's node.
func (o *PressureOptions) watchEviction(ctx context.Context, c *kube.Clients, pod *corev1.Pod, s pressure.Spec, pods watch.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	out, errOut := o.f.IOStreams.Out, o.f.IOStreams.ErrOut
	tl := &pressure.Timeline{Start: o.f.Now(), Pod: pod.Name, Node: pod.Spec.NodeName, Container: s.Name,
		Head: pod.Labels[pressure.LabelNodeType] == "head"}
	tl.Injected()
	printed := 0
	flush := func() {
		for _, e := range tl.Events()[printed:] {
			fmt.Fprintln(out, e)
		}
		printed = len(tl.Events())
	}
	flush()

	selector := podWatchSelector(pod)
	podRV := pod.ResourceVersion
	defer func() { pods.Stop() }()
	var err error
	var nodes watch.Interface
	var nodeEvents <-chan watch.Event
	if tl.Node != "" {
		if nodes, err = c.WatchNodeNamed(ctx, tl.Node); err != nil {
			fmt.Fprintf(errOut, "warning: %s; the timeline will not show node pressure\n", err)
		} else {
			defer func() { nodes.Stop() }()
			nodeEvents = nodes.ResultChan()
		}
	}

	for !tl.Done() {
		select {
		case <-ctx.Done():
			return o.verdict(tl)
		case ev, ok := <-pods.ResultChan():
			if !ok || isExpired(ev) {
				// Watches end (server timeouts, compaction); resume from what was last seen.
				pods.Stop()
				if isExpired(ev) {
					podRV = ""
				}
				if pods, err = c.WatchTargetPods(ctx, pod.Namespace, selector, pod.Name, podRV); err != nil {
					if ctx.Err() != nil {
						return o.verdict(tl)
					}
					return err
				}
				continue
			}
			if p, isPod := ev.Object.(*corev1.Pod); isPod {
				podRV = p.ResourceVersion
				tl.ObservePod(p, ev.Type == watch.Deleted, o.f.Now())
			}
		case ev, ok := <-nodeEvents:
			if !ok || isExpired(ev) {
				nodes.Stop()
				if nodes, err = c.WatchNodeNamed(ctx, tl.Node); err != nil {
					nodeEvents = nil
					continue
				}
				nodeEvents = nodes.ResultChan()
				continue
			}
			if n, isNode := ev.Object.(*corev1.Node); isNode {
				tl.ObserveNode(n, o.f.Now())
			}
		}
		flush()
	}
	return o.verdict(tl)
}

func (o *PressureOptions) verdict(tl *pressure.Timeline) error {
	line, ok := tl.Verdict(o.timeout)
	fmt.Fprintln(o.f.IOStreams.Out, line)
	if !ok {
		return exit.Silent{Code: exit.CheckFailed}
	}
	return nil
}

func isExpired(ev watch.Event) bool {
	st, ok := ev.Object.(*metav1.Status)
	return ev.Type == watch.Error && ok && (st.Code == http.StatusGone || st.Reason == metav1.StatusReasonExpired)
}
