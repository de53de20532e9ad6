package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// The Gateway API's Gateways and HTTPRoutes, which KubeRay makes for a RayService's incremental
// upgrade. The plugin has no clientset for them: each LIST is read as JSON, by its path, and
// client fakes (no rest.Config) hold none. A 404 is a cluster without the Gateway API's CRDs.

// ListGateways lists the Gateways of namespace ("" for all).
func (c *Clients) ListGateways(ctx context.Context, namespace string) ([]ray.Gateway, error) {
	return ListAll(ctx, "", gatewayAPIPages(c, namespace, "gateways", func(g *ray.Gateway, raw []byte) { g.Served = raw }))
}

// ListHTTPRoutes lists the HTTPRoutes of namespace ("" for all).
func (c *Clients) ListHTTPRoutes(ctx context.Context, namespace string) ([]ray.HTTPRoute, error) {
	return ListAll(ctx, "", gatewayAPIPages(c, namespace, "httproutes", func(r *ray.HTTPRoute, raw []byte) { r.Served = raw }))
}

// gatewayAPIPages reads resource's pages; each item is decoded and handed to served with its JSON.
func gatewayAPIPages[T any](c *Clients, namespace, resource string, served func(*T, []byte)) ListPageFunc[T] {
	return func(ctx context.Context, o metav1.ListOptions) (Page[T], error) {
		if c.Config == nil {
			return Page[T]{}, nil
		}
		path := "/apis/" + ray.GatewayGroup + "/v1/"
		if namespace != "" {
			path += "namespaces/" + namespace + "/"
		}
		raw, err := c.Kube.Discovery().RESTClient().Get().AbsPath(path+resource).
			VersionedParams(&o, metav1.ParameterCodec).Do(ctx).Raw()
		if err != nil {
			return Page[T]{}, err
		}
		return decodeServed(raw, served)
	}
}
