package kube

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"
)

// ListDeployments lists Deployments in namespace ("" for all) in pages: the KubeRay operator is
// found among them by labels or image (diagnose.FindOperators), in whatever namespace it runs.
func (c *Clients) ListDeployments(ctx context.Context, namespace string) ([]appsv1.Deployment, error) {
	var out []appsv1.Deployment
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return c.Kube.AppsV1().Deployments(namespace).List(ctx, opts)
	})
	p.PageSize = PageSize
	err := p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		out = append(out, *obj.(*appsv1.Deployment))
		return nil
	})
	if err != nil {
		return nil, Explain(err, Request{Verb: "list", Resource: "deployments", Namespace: namespace, Host: c.Host()})
	}
	return out, nil
}

// PageSize is the LIST page size, kubectl's --chunk-size default.
const PageSize = 500
