package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
)

// ListEventsAbout reads the Events about one object, selected by its UID on the server
// (involvedObject.uid), in pages: what heal keeps of a pod before it deletes it. Heal deletes a
// few pods, each read once; the namespace's other Events never cross the wire.
func (c *Clients) ListEventsAbout(ctx context.Context, namespace string, uid types.UID) ([]corev1.Event, error) {
	opts := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.uid", string(uid)).String()}
	out, err := ListAllWith(ctx, opts, func(ctx context.Context, o metav1.ListOptions) (Page[corev1.Event], error) {
		l, err := c.Kube.CoreV1().Events(namespace).List(ctx, o)
		if err != nil {
			return Page[corev1.Event]{}, err
		}
		return Page[corev1.Event]{Items: l.Items, Continue: l.Continue}, nil
	})
	if err != nil {
		return nil, Explain(err, Request{Verb: "list", Resource: "events", Namespace: namespace, Host: c.Host()})
	}
	return out, nil
}
