package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NamespaceNames lists the namespaces' names, for shell completion of -n: one page, and nothing
// when the user may not list namespaces (completion must never print an error).
func (c *Clients) NamespaceNames(ctx context.Context) []string {
	l, err := c.Kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: PageSize})
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(l.Items))
	for _, ns := range l.Items {
		names = append(names, ns.Name)
	}
	return names
}
