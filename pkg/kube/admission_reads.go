package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// The reads of doctor -f against a cluster that only it makes: what would admit the
// documents' pods if they were applied now (load.Admission). One paged LIST per kind and namespace.

// ListResourceQuotas lists the ResourceQuotas of namespace.
func (c *Clients) ListResourceQuotas(ctx context.Context, namespace string) ([]corev1.ResourceQuota, error) {
	return listExplained(ctx, "", Request{Verb: "list", Resource: "resourcequotas", Namespace: namespace, Host: c.Host()},
		c.Kube.CoreV1().ResourceQuotas(namespace).List,
		func(l *corev1.ResourceQuotaList) []corev1.ResourceQuota { return l.Items })
}

// ListLimitRanges lists the LimitRanges of namespace.
func (c *Clients) ListLimitRanges(ctx context.Context, namespace string) ([]corev1.LimitRange, error) {
	return listExplained(ctx, "", Request{Verb: "list", Resource: "limitranges", Namespace: namespace, Host: c.Host()},
		c.Kube.CoreV1().LimitRanges(namespace).List,
		func(l *corev1.LimitRangeList) []corev1.LimitRange { return l.Items })
}
