package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CreateEvent records a core/v1 Event. Events are written directly rather than through
// client-go's asynchronous recorder: a one-shot command must know the Event was stored before
// it exits, and must be able to say so when RBAC forbids it.
func (c *Clients) CreateEvent(ctx context.Context, ev *corev1.Event, dryRun bool) error {
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err := c.Kube.CoreV1().Events(ev.Namespace).Create(ctx, ev, opts)
	return Explain(err, Request{Verb: "create", Resource: "events", Namespace: ev.Namespace, Host: c.Host()})
}
