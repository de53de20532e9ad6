package kube

import (
	"context"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/cache"
)

// GetService reads one named Service (the Service a probe targets).
func (c *Clients) GetService(ctx context.Context, namespace, name string) (*corev1.Service, error) {
	return getExplained(ctx, c, "services", namespace, name, c.Kube.CoreV1().Services(namespace).Get)
}

// ReadyEndpoint is one pod ready behind a Service port: the pod's name and the container port
// the Service's port maps to there (what a port-forward to the pod must open).
type ReadyEndpoint struct {
	Pod  string
	Port int
}

// ReadyEndpoints reduces a Service's EndpointSlices to the ready pods behind the Service port
// named portName ("" for an unnamed port), sorted by pod name. An endpoint whose ready condition
// is unset counts as ready, as kube-proxy counts it; endpoints that are not pods are skipped
// (nothing to port-forward to).
func ReadyEndpoints(slices []*discoveryv1.EndpointSlice, portName string) []ReadyEndpoint {
	seen := map[string]bool{}
	var out []ReadyEndpoint
	for _, s := range slices {
		port := -1
		for _, p := range s.Ports {
			if p.Port != nil && p.Name != nil && *p.Name == portName || p.Port != nil && p.Name == nil && portName == "" {
				port = int(*p.Port)
			}
		}
		if port < 0 {
			continue
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			if e.TargetRef == nil || e.TargetRef.Kind != "Pod" || seen[e.TargetRef.Name] {
				continue
			}
			seen[e.TargetRef.Name] = true
			out = append(out, ReadyEndpoint{Pod: e.TargetRef.Name, Port: port})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod < out[j].Pod })
	return out
}

// WatchReadyEndpoints follows the EndpointSlices of Service service (label
// kubernetes.io/service-name) with ONE list and a watch, and calls handle with the full ready
// set behind portName after the first list and after every change, until ctx ends. synced is
// closed after the first call. Calls come from one goroutine.
func (c *Clients) WatchReadyEndpoints(ctx context.Context, namespace, service, portName string, synced chan<- struct{}, handle func([]ReadyEndpoint)) error {
	selector := discoveryv1.LabelServiceName + "=" + service
	slices := c.Kube.DiscoveryV1().EndpointSlices(namespace)
	lw := listWatch(slices.List, slices.Watch, Selected{Label: selector})
	inf := newInformer(lw, &discoveryv1.EndpointSlice{}, cache.Indexers{})
	_ = inf.SetTransform(stripManagedFields)
	emit := func() {
		var list []*discoveryv1.EndpointSlice
		for _, o := range inf.GetStore().List() {
			if s, ok := o.(*discoveryv1.EndpointSlice); ok {
				list = append(list, s)
			}
		}
		handle(ReadyEndpoints(list, portName))
	}
	return runCoalesced(ctx, inf, Request{Verb: "watch", Resource: "endpointslices.discovery.k8s.io", Namespace: namespace, Host: c.Host()}, synced, emit)
}

// ListReadyEndpoints is one LIST of the Service's EndpointSlices, reduced by ReadyEndpoints.
func (c *Clients) ListReadyEndpoints(ctx context.Context, namespace, service, portName string) ([]ReadyEndpoint, error) {
	items, err := listExplained(ctx, discoveryv1.LabelServiceName+"="+service,
		Request{Verb: "list", Resource: "endpointslices.discovery.k8s.io", Namespace: namespace, Host: c.Host()},
		c.Kube.DiscoveryV1().EndpointSlices(namespace).List,
		func(l *discoveryv1.EndpointSliceList) []discoveryv1.EndpointSlice { return l.Items })
	if err != nil {
		return nil, err
	}
	slices := make([]*discoveryv1.EndpointSlice, len(items))
	for i := range items {
		slices[i] = &items[i]
	}
	return ReadyEndpoints(slices, portName), nil
}
