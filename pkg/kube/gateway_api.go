package kube

import (
	"context"
	"encoding/json"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

// GetGateway reads one Gateway (chaos upgrade checks it before an incremental upgrade). A cluster
// without the Gateway API answers NotFound, as for a missing Gateway.
func (c *Clients) GetGateway(ctx context.Context, namespace, name string) (*ray.Gateway, error) {
	return getExplained(ctx, c, "gateways", namespace, name, gatewayAPIGet[ray.Gateway](c, namespace, "gateways"))
}

// GetHTTPRoute reads one HTTPRoute, as GetGateway.
func (c *Clients) GetHTTPRoute(ctx context.Context, namespace, name string) (*ray.HTTPRoute, error) {
	return getExplained(ctx, c, "httproutes", namespace, name, gatewayAPIGet[ray.HTTPRoute](c, namespace, "httproutes"))
}

// gatewayAPIGet is a typed client's Get for resource in namespace, read as JSON by its path.
func gatewayAPIGet[T any](c *Clients, namespace, resource string) func(context.Context, string, metav1.GetOptions) (*T, error) {
	return func(ctx context.Context, name string, o metav1.GetOptions) (*T, error) {
		if c.Config == nil { // a client fake: it holds none
			return nil, apierrors.NewNotFound(schema.GroupResource{Group: ray.GatewayGroup, Resource: resource}, name)
		}
		raw, err := c.Kube.Discovery().RESTClient().Get().
			AbsPath("/apis/"+ray.GatewayGroup+"/v1/namespaces/"+namespace+"/"+resource+"/"+name).
			VersionedParams(&o, metav1.ParameterCodec).Do(ctx).Raw()
		if err != nil {
			return nil, err
		}
		var obj T
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, err
		}
		return &obj, nil
	}
}
