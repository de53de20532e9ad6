package kube

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// WatchPods lists and then watches the pods matching selector in namespace ("" for all) and
// calls handle with every pod added or changed, until ctx ends. It is an informer, so an expired
// watch or an API server restart only makes it list again. An error it cannot recover from by
// retrying (forbidden, unauthorized) ends it with that error, explained.
func (c *Clients) WatchPods(ctx context.Context, namespace, selector string, handle func(*corev1.Pod)) error {
	pods := c.Kube.CoreV1().Pods(namespace)
	lw := listWatch(pods.List, pods.Watch, Selected{Label: selector})
	inf := newInformer(lw, &corev1.Pod{}, cache.Indexers{})
	_ = inf.SetTransform(stripManagedFields)
	req := Request{Verb: "watch", Resource: "pods", Namespace: namespace, Host: c.Host()}
	return runInformer(ctx, inf, req, nil, func(obj any, deleted bool) {
		if p, ok := obj.(*corev1.Pod); ok && !deleted {
			handle(p)
		}
	})
}

// isFatalWatchError: errors an informer would retry forever, where retrying cannot help.
func isFatalWatchError(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) ||
		(apierrors.IsNotFound(err) && !errors.Is(err, context.Canceled))
}

// stripManagedFields drops what heal never reads, so caches of thousands of pods stay small.
func stripManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// syncError names the resource an informer could not list or watch, and the verb refused, for
// the one line the user sees.
func syncError(resource, namespace string, err error, host string) error {
	if err == nil {
		return fmt.Errorf("cannot list %s: the cache did not sync", resource)
	}
	verb := "list"
	if rw := (*refusedWatch)(nil); errors.As(err, &rw) {
		verb = "watch"
	}
	return Explain(err, Request{Verb: verb, Resource: resource, Namespace: namespace, Host: host})
}
