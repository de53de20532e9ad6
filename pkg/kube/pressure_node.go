package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
)

// The pressure runner's view of the target's node: who else runs there (the plan names them),
// which of them the kubelet evicts during the run (bystanders), and the kubelet's Evicted Events.

// onNode selects the pods bound to node.
func onNode(node string) string { return fields.OneTermEqualSelector("spec.nodeName", node).String() }

// KubeletEvictedSelector selects the Events the kubelet's eviction manager records on the pods it
// evicts (reason Evicted, source kubelet).
var KubeletEvictedSelector = fields.Set{"involvedObject.kind": "Pod", "reason": "Evicted", "source": "kubelet"}.AsSelector().String()

// ListPodsOnNode lists the pods bound to node in namespace ("" for every namespace) with one
// paged LIST selected by field spec.nodeName, and returns them with the list's resourceVersion,
// to watch from.
func (c *Clients) ListPodsOnNode(ctx context.Context, namespace, node string) ([]corev1.Pod, string, error) {
	var rv string
	pods := c.Kube.CoreV1().Pods(namespace)
	out, err := ListAllWith(ctx, metav1.ListOptions{FieldSelector: onNode(node)}, func(ctx context.Context, o metav1.ListOptions) (Page[corev1.Pod], error) {
		l, err := pods.List(ctx, o)
		if err != nil {
			return Page[corev1.Pod]{}, err
		}
		rv = l.ResourceVersion
		return Page[corev1.Pod]{Items: l.Items, Continue: l.Continue}, nil
	})
	if err != nil {
		return nil, "", Explain(err, Request{Verb: "list", Resource: "pods", Namespace: namespace, Host: c.Host()})
	}
	return out, rv, nil
}

// WatchPodsOnNode watches the pods bound to node in namespace ("" for every namespace) from
// resourceVersion.
func (c *Clients) WatchPodsOnNode(ctx context.Context, namespace, node, resourceVersion string) (watch.Interface, error) {
	w, err := c.Kube.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{FieldSelector: onNode(node),
		ResourceVersion: resourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		return nil, Explain(err, Request{Verb: "watch", Resource: "pods", Namespace: namespace, Host: c.Host()})
	}
	return w, nil
}

// WatchEvictionEvents watches the kubelet's Evicted Events in namespace ("" for every namespace)
// from resourceVersion. Without one it starts from now: it LISTs one Event first to learn the
// current version, since a watch from no version replays every stored Event, evictions of an hour
// ago included.
func (c *Clients) WatchEvictionEvents(ctx context.Context, namespace, resourceVersion string) (watch.Interface, error) {
	events := c.Kube.CoreV1().Events(namespace)
	if resourceVersion == "" {
		l, err := events.List(ctx, metav1.ListOptions{FieldSelector: KubeletEvictedSelector, Limit: 1})
		if err != nil {
			return nil, Explain(err, Request{Verb: "list", Resource: "events", Namespace: namespace, Host: c.Host()})
		}
		resourceVersion = l.ResourceVersion
	}
	w, err := events.Watch(ctx, metav1.ListOptions{FieldSelector: KubeletEvictedSelector, ResourceVersion: resourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		return nil, Explain(err, Request{Verb: "watch", Resource: "events", Namespace: namespace, Host: c.Host()})
	}
	return w, nil
}
