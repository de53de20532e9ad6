package kube

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
)

// ListDeployments lists Deployments in namespace ("" for all) in pages: the KubeRay operator is
// found among them by labels or image (diagnose.FindOperators), in whatever namespace it runs.
func (c *Clients) ListDeployments(ctx context.Context, namespace string) ([]appsv1.Deployment, error) {
	return listExplained(ctx, "", Request{Verb: "list", Resource: "deployments", Namespace: namespace, Host: c.Host()},
		c.Kube.AppsV1().Deployments(namespace).List,
		func(l *appsv1.DeploymentList) []appsv1.Deployment { return l.Items })
}

// PageSize is the LIST page size, kubectl's --chunk-size default.
const PageSize = 500

// PodPageSize is the page size of the Ray pods' LIST. Pods are the most numerous objects doctor
// reads and, as protobuf, among the smallest (~3.5 kB each on the wire): 2,000 a page keeps a
// fleet of 20,000 pods to 10 requests (40 at PageSize). A page is decoded and trimmed pod by pod
// (podPage), so a larger page costs its bytes, not 2,000 full pods (docs/performance.md).
// Custom resources, JSON only and several times larger, stay at PageSize.
const PodPageSize = 2000
