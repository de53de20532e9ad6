package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// The reads of doctor -f against a cluster (issue 31): what would admit and place the documents'
// pods if they were applied now. One paged LIST per kind and namespace; nodes once, trimmed to
// their labels, taints and allocatable.

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

// ListNodesForFit lists every node, trimmed to what says whether a pod fits it
// (diagnose.TrimNodeForFit).
func (c *Clients) ListNodesForFit(ctx context.Context) ([]corev1.Node, error) {
	nodes, err := listExplained(ctx, "", Request{Verb: "list", Resource: "nodes", Host: c.Host()},
		c.Kube.CoreV1().Nodes().List,
		func(l *corev1.NodeList) []corev1.Node { return l.Items })
	for i := range nodes {
		diagnose.TrimNodeForFit(&nodes[i])
	}
	return nodes, err
}
