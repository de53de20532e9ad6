package kube

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// Selected is the label and field selectors every LIST and WATCH of an informer carries.
type Selected struct{ Label, Field string }

// listWatch is an informer's ListWatch over a typed client's List and Watch (method values such as
// c.Kube.CoreV1().Pods(ns).List), with sel set on every call.
func listWatch[L runtime.Object](list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), sel Selected) *cache.ListWatch {
	apply := func(o *metav1.ListOptions) {
		o.LabelSelector, o.FieldSelector = sel.Label, sel.Field
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			apply(&o)
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			apply(&o)
			w, err := watchFn(ctx, o)
			if apierrors.IsForbidden(err) {
				return w, &refusedWatch{err}
			}
			return w, err
		},
	}
}

// newInformer is an informer over lw that lists, then watches, as client-go did before v0.35.
// Since v0.35 client-go's reflector first tries a watch-list (one WATCH with sendInitialEvents,
// its WatchListClient gate on by default); that bypasses trimmedPages' paged, trimmed first LIST,
// and a role with watch but not list would sync where the cluster's own LIST is refused. Saying
// the ListWatch does not support watch-list semantics keeps the reflector on LIST then WATCH.
func newInformer(lw *cache.ListWatch, obj runtime.Object, indexers cache.Indexers) cache.SharedIndexInformer {
	return cache.NewSharedIndexInformer(listThenWatch{lw}, obj, 0, indexers)
}

// listThenWatch is a ListWatch the reflector never watch-lists with (client-go's
// watchlist.DoesClientNotSupportWatchListSemantics).
type listThenWatch struct{ *cache.ListWatch }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// refusedWatch is a WATCH that RBAC refused. An informer's error handler hears the errors of its
// LIST and of its WATCH alike; this one tells them apart, so that a role with list but not watch
// is told to add watch (syncError), not the list it has.
type refusedWatch struct{ err error }

func (e *refusedWatch) Error() string { return e.err.Error() }
func (e *refusedWatch) Unwrap() error { return e.err }
