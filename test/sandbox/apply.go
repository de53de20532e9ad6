package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Applier creates objects from YAML through the dynamic client, like `kubectl create -f`.
type Applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// NewApplier returns an Applier for cfg.
func NewApplier(cfg *rest.Config) (*Applier, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}, nil
}

// Create creates every object in the multi-document YAML data, in namespace ns when the object
// is namespaced and names none. Objects that exist already are left as they are.
func (a *Applier) Create(ctx context.Context, data []byte, ns string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		if len(obj.Object) == 0 {
			continue
		}
		created, err := a.CreateObject(ctx, obj, ns)
		if err != nil {
			return out, err
		}
		out = append(out, created)
	}
}

// CreateObject creates one object.
func (a *Applier) CreateObject(ctx context.Context, obj *unstructured.Unstructured, ns string) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		// A CRD created a moment ago: refresh discovery once.
		a.mapper.Reset()
		if m, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return nil, fmt.Errorf("no API for %s: %v", gvk, err)
		}
	}
	var ri dynamic.ResourceInterface = a.dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(ns)
		}
		ri = a.dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
	}
	created, err := ri.Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("create %s %s: %v", gvk.Kind, obj.GetName(), err)
	}
	return created, nil
}

// Reset forgets cached discovery (after CRDs are installed).
func (a *Applier) Reset() { a.mapper.Reset() }
