package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
)

// GetPodByName reads one named pod (a pod/NAME argument).
func (c *Clients) GetPodByName(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	return getExplained(ctx, c, "pods", namespace, name, c.Kube.CoreV1().Pods(namespace).Get)
}

// ListPodsMatching lists the pods in namespace that match a label selector, in pages: one LIST,
// however many pods there are.
func (c *Clients) ListPodsMatching(ctx context.Context, namespace, selector string) ([]corev1.Pod, error) {
	return listExplained(ctx, selector, Request{Verb: "list", Resource: "pods", Namespace: namespace, Host: c.Host()},
		c.Kube.CoreV1().Pods(namespace).List,
		func(l *corev1.PodList) []corev1.Pod { return l.Items })
}

// WatchTargetPods watches pods in namespace selected by labels (labelSelector) or, when it is empty, the
// one pod called name, from resourceVersion.
func (c *Clients) WatchTargetPods(ctx context.Context, namespace, labelSelector, name, resourceVersion string) (watch.Interface, error) {
	opts := metav1.ListOptions{LabelSelector: labelSelector, ResourceVersion: resourceVersion, AllowWatchBookmarks: true}
	if labelSelector == "" {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	}
	w, err := c.Kube.CoreV1().Pods(namespace).Watch(ctx, opts)
	if err != nil {
		return nil, Explain(err, Request{Verb: "watch", Resource: "pods", Namespace: namespace, Host: c.Host()})
	}
	return w, nil
}

// WatchNodeNamed watches the one node called name.
func (c *Clients) WatchNodeNamed(ctx context.Context, name string) (watch.Interface, error) {
	w, err := c.Kube.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(), AllowWatchBookmarks: true,
	})
	if err != nil {
		return nil, Explain(err, Request{Verb: "watch", Resource: "nodes", Host: c.Host()})
	}
	return w, nil
}
