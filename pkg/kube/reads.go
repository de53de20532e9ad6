package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// listExplained is one paged LIST (ListAll) of what list returns, page turning a returned list
// into its items and continue token; an error comes back explained with req.
func listExplained[T any, PT interface {
	*T
	metav1.Object
}, L any](ctx context.Context, selector string, req Request, list func(context.Context, metav1.ListOptions) (L, error), page func(L) Page[T]) ([]T, error) {
	out, err := ListAll[T, PT](ctx, selector, func(ctx context.Context, o metav1.ListOptions) (Page[T], error) {
		l, err := list(ctx, o)
		if err != nil {
			return Page[T]{}, err
		}
		return page(l), nil
	})
	if err != nil {
		return nil, Explain(err, req)
	}
	return out, nil
}

// getExplained reads the object called name through get; an error comes back explained as a get
// of resource.
func getExplained[T any](ctx context.Context, c *Clients, resource, namespace, name string, get func(context.Context, string, metav1.GetOptions) (*T, error)) (*T, error) {
	o, err := get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, Explain(err, Request{Verb: "get", Resource: resource, Namespace: namespace, Name: name, Host: c.Host()})
	}
	return o, nil
}
