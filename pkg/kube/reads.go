package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// listExplained is one paged LIST (ListAll) of what list returns, items picking a page's items
// out of the list type; an error comes back explained with req.
func listExplained[T any, PT interface {
	*T
	metav1.Object
}, L interface{ GetContinue() string }](ctx context.Context, selector string, req Request, list func(context.Context, metav1.ListOptions) (L, error), items func(L) []T) ([]T, error) {
	out, err := ListAll[T, PT](ctx, selector, pagesOf(list, items, nil))
	if err != nil {
		return nil, Explain(err, req)
	}
	return out, nil
}

// explained is out, or err explained with req.
func explained[T any](out []T, err error, req Request) ([]T, error) {
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
