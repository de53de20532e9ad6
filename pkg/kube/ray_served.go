package kube

import (
	"context"
	"encoding/json"

	rayscheme "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// The Ray objects as the API server serves them. This plugin's KubeRay API types (v1.6.2) drop
// the fields newer releases write (KubeRay v1.7.0's spec.networkPolicy, tlsOptions,
// gcsFaultToleranceOptions.storage, a RayJob's jobStatusCheckFailureStartTime...); a reader
// that must not lose them (a bundle, the fields read beside the types) takes each object with
// its JSON as served.

// servedList is a LIST's JSON with its items left as written.
type servedList struct {
	Metadata metav1.ListMeta   `json:"metadata"`
	Items    []json.RawMessage `json:"items"`
}

// servedPages is the ListPageFunc of the Ray resource (plural) of namespace read as JSON: each
// item is decoded into T and handed to each with its JSON (its own copy, which each may keep).
// Client fakes (no rest.Config) hold typed objects only, and have no transport to read JSON
// through: typed lists them, and each gets the typed object's JSON.
func servedPages[T any](c *Clients, namespace, resource string, typed ListPageFunc[T], each func(*T, []byte)) ListPageFunc[T] {
	if c.Config == nil {
		return func(ctx context.Context, o metav1.ListOptions) (Page[T], error) {
			p, err := typed(ctx, o)
			for i := range p.Items {
				raw, jerr := json.Marshal(&p.Items[i])
				if jerr != nil {
					return Page[T]{}, jerr
				}
				each(&p.Items[i], raw)
			}
			return p, err
		}
	}
	return func(ctx context.Context, o metav1.ListOptions) (Page[T], error) {
		raw, err := c.Ray.RayV1().RESTClient().Get().Namespace(namespace).Resource(resource).
			VersionedParams(&o, rayscheme.ParameterCodec).Do(ctx).Raw()
		if err != nil {
			return Page[T]{}, err
		}
		return decodeServed(raw, each)
	}
}

// decodeServed decodes a LIST's JSON (raw) item by item into T, as the typed clients decode
// (apimachinery's decoder: field names matched by case), and hands each to each with its JSON
// (its own copy, which each may keep).
func decodeServed[T any](raw []byte, each func(*T, []byte)) (Page[T], error) {
	var l servedList
	if err := json.Unmarshal(raw, &l); err != nil {
		return Page[T]{}, err
	}
	items := make([]T, len(l.Items))
	for i, item := range l.Items {
		if err := utiljson.Unmarshal(item, &items[i]); err != nil {
			return Page[T]{}, err
		}
		each(&items[i], item)
	}
	return Page[T]{Items: items, Continue: l.Metadata.Continue}, nil
}
