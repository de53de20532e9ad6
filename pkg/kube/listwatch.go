package kube

import (
	"context"

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
			return watchFn(ctx, o)
		},
	}
}
