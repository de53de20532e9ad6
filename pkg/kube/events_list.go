package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// listHeadEvents reads the Events about RayClusters in namespace ("" for all) with one paged LIST
// selected by field (involvedObject.kind=RayCluster), never one request per cluster. Each page is
// filtered to the head lifecycle Events rules read and trimmed as it arrives, as pods are: a busy
// namespace holds thousands of Events about worker pods that no rule reads.
func (c *Clients) listHeadEvents(ctx context.Context, namespace string) ([]corev1.Event, error) {
	return c.listEvents(ctx, namespace, diagnose.EventFieldSelector, diagnose.KeepEvent)
}

// listWarnings reads the operator's Warning Events about RayJobs and RayServices the same way
// (diagnose.WarningFieldSelector, diagnose.KeepWarning).
func (c *Clients) listWarnings(ctx context.Context, namespace string) ([]corev1.Event, error) {
	return c.listEvents(ctx, namespace, diagnose.WarningFieldSelector, diagnose.KeepWarning)
}

// listEvents is one paged LIST of the Events selected by field, filtered by keep and trimmed as
// each page arrives.
func (c *Clients) listEvents(ctx context.Context, namespace, fieldSelector string, keep func(*corev1.Event) bool) ([]corev1.Event, error) {
	opts := metav1.ListOptions{FieldSelector: fieldSelector}
	return ListAllWith(ctx, opts, func(ctx context.Context, o metav1.ListOptions) (Page[corev1.Event], error) {
		l, err := c.Kube.CoreV1().Events(namespace).List(ctx, o)
		if err != nil {
			return Page[corev1.Event]{}, err
		}
		kept := l.Items[:0]
		for i := range l.Items {
			if keep(&l.Items[i]) {
				diagnose.TrimEvent(&l.Items[i])
				kept = append(kept, l.Items[i])
			}
		}
		// A fresh slice, so the page's dropped Events are not kept alive behind the kept ones.
		return Page[corev1.Event]{Items: append([]corev1.Event(nil), kept...), Continue: l.Continue}, nil
	})
}
