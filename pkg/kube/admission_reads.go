package kube

import (
	"context"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
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

// ListRayObjectsIn lists the RayClusters, RayServices and RayJobs of namespace, one paged LIST per
// kind, kept to what doctor -f asks of an object its documents would change: that it exists, and a
// RayService's active cluster. The first refused read ends it.
func (c *Clients) ListRayObjectsIn(ctx context.Context, namespace string) ([]diagnose.Existing, error) {
	host := c.Host()
	clusters, err := listExplained(ctx, "", Request{Verb: "list", Resource: "rayclusters.ray.io", Namespace: namespace, Host: host},
		c.Ray.RayV1().RayClusters(namespace).List, func(l *rayv1.RayClusterList) []rayv1.RayCluster { return l.Items })
	if err != nil {
		return nil, err
	}
	services, err := listExplained(ctx, "", Request{Verb: "list", Resource: "rayservices.ray.io", Namespace: namespace, Host: host},
		c.Ray.RayV1().RayServices(namespace).List, func(l *rayv1.RayServiceList) []rayv1.RayService { return l.Items })
	if err != nil {
		return nil, err
	}
	jobs, err := listExplained(ctx, "", Request{Verb: "list", Resource: "rayjobs.ray.io", Namespace: namespace, Host: host},
		c.Ray.RayV1().RayJobs(namespace).List, func(l *rayv1.RayJobList) []rayv1.RayJob { return l.Items })
	if err != nil {
		return nil, err
	}
	var out []diagnose.Existing
	for _, rc := range clusters {
		out = append(out, diagnose.Existing{Kind: "RayCluster", Namespace: namespace, Name: rc.Name})
	}
	for _, rs := range services {
		out = append(out, diagnose.Existing{Kind: "RayService", Namespace: namespace, Name: rs.Name, ActiveCluster: rs.Status.ActiveServiceStatus.RayClusterName})
	}
	for _, rj := range jobs {
		out = append(out, diagnose.Existing{Kind: "RayJob", Namespace: namespace, Name: rj.Name})
	}
	return out, nil
}
