package kube

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
)

// ListDeployments lists Deployments in namespace ("" for all) in pages: the KubeRay operator is
// found among them by labels or image (ray.FindOperators), in whatever namespace it runs.
func (c *Clients) ListDeployments(ctx context.Context, namespace string) ([]appsv1.Deployment, error) {
	return listExplained(ctx, "", Request{Verb: "list", Resource: "deployments", Namespace: namespace, Host: c.Host()},
		c.Kube.AppsV1().Deployments(namespace).List,
		func(l *appsv1.DeploymentList) []appsv1.Deployment { return l.Items })
}

// PageSize is the LIST page size, kubectl's default chunk size.
const PageSize = 500
