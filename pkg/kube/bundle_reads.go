package kube

import (
	"context"
	"sort"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The reads `kubectl ray bundle` makes beyond doctor's snapshot: one paged LIST per kind and
// namespace, selected by label where the objects carry one, and the container logs (one GET
// each: the API has no LIST of logs). Errors come back explained with the verb and resource, as
// the index of a bundle names them.

// ListServicesMatching lists the Services in namespace ("" for all) that match selector.
func (c *Clients) ListServicesMatching(ctx context.Context, namespace, selector string) ([]corev1.Service, error) {
	out, err := c.ListServices(ctx, namespace, selector)
	return explained(out, err, Request{Verb: "list", Resource: "services", Namespace: namespace, Host: c.Host()})
}

// ListEndpointSlicesMatching lists the EndpointSlices in namespace that match selector (the
// EndpointSlice controller copies a Service's labels onto its slices).
func (c *Clients) ListEndpointSlicesMatching(ctx context.Context, namespace, selector string) ([]discoveryv1.EndpointSlice, error) {
	out, err := c.ListEndpointSlices(ctx, namespace, selector)
	return explained(out, err, Request{Verb: "list", Resource: "endpointslices.discovery.k8s.io", Namespace: namespace, Host: c.Host()})
}

// ListJobsMatching lists the Jobs in namespace that match selector.
func (c *Clients) ListJobsMatching(ctx context.Context, namespace, selector string) ([]batchv1.Job, error) {
	out, err := c.ListJobs(ctx, namespace, selector, nil)
	return explained(out, err, Request{Verb: "list", Resource: "jobs.batch", Namespace: namespace, Host: c.Host()})
}

// ListPodDisruptionBudgets lists the PodDisruptionBudgets in namespace. They carry no label of
// KubeRay's (KubeRay creates none, kuberay #5004): which ones cover Ray pods is read from their
// selectors, so the LIST has none.
func (c *Clients) ListPodDisruptionBudgets(ctx context.Context, namespace string) ([]policyv1.PodDisruptionBudget, error) {
	out, err := c.ListBudgets(ctx, namespace)
	return explained(out, err, Request{Verb: "list", Resource: "poddisruptionbudgets.policy", Namespace: namespace, Host: c.Host()})
}

// ListEventsKept is one paged LIST of the Events in namespace, each page filtered by keep as it
// arrives: Events name their object by kind, name and UID, and no field selector ORs many
// objects, so the namespace's Events are read once and those about other objects dropped.
func (c *Clients) ListEventsKept(ctx context.Context, namespace string, keep func(*corev1.Event) bool) ([]corev1.Event, error) {
	out, err := ListAllWith(ctx, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) (Page[corev1.Event], error) {
		l, err := c.Kube.CoreV1().Events(namespace).List(ctx, o)
		if err != nil {
			return Page[corev1.Event]{}, err
		}
		var kept []corev1.Event
		for i := range l.Items {
			if keep(&l.Items[i]) {
				kept = append(kept, l.Items[i])
			}
		}
		return Page[corev1.Event]{Items: kept, Continue: l.Continue}, nil
	})
	if err != nil {
		return nil, Explain(err, Request{Verb: "list", Resource: "events", Namespace: namespace, Host: c.Host()})
	}
	return out, nil
}

// PodLog reads one container's log with opts (container, previous, tail, limit, since): one GET
// of pods/log.
func (c *Clients) PodLog(ctx context.Context, namespace, pod string, opts *corev1.PodLogOptions) ([]byte, error) {
	b, err := c.Kube.CoreV1().Pods(namespace).GetLogs(pod, opts).DoRaw(ctx)
	if err != nil {
		return nil, Explain(err, Request{Verb: "get", Resource: "pods/log", Namespace: namespace, Name: pod, Host: c.Host()})
	}
	return b, nil
}

// APIVersions is what the API server says of itself and of KubeRay's API group: its version,
// and the versions and resources ray.io serves (what the installed CRDs define).
type APIVersions struct {
	Server       string              `json:"server"`
	RayVersions  []string            `json:"rayGroupVersions"`
	RayResources map[string][]string `json:"rayResources"` // group version -> resources
}

// ReadAPIVersions asks discovery: the server's version and the ray.io group. Two or three GETs of
// discovery documents, however many objects there are.
func (c *Clients) ReadAPIVersions() (APIVersions, error) {
	var v APIVersions
	d := c.Kube.Discovery()
	sv, err := d.ServerVersion()
	if err != nil {
		return v, Explain(err, Request{Verb: "get", Resource: "version", Host: c.Host()})
	}
	v.Server = sv.GitVersion
	groups, err := d.ServerGroups()
	if err != nil {
		return v, Explain(err, Request{Verb: "get", Resource: "api groups (discovery)", Host: c.Host()})
	}
	v.RayResources = map[string][]string{}
	for _, g := range groups.Groups {
		if g.Name != "ray.io" {
			continue
		}
		for _, gv := range g.Versions {
			v.RayVersions = append(v.RayVersions, gv.GroupVersion)
			rl, err := d.ServerResourcesForGroupVersion(gv.GroupVersion)
			if err != nil {
				continue
			}
			for _, r := range rl.APIResources {
				v.RayResources[gv.GroupVersion] = append(v.RayResources[gv.GroupVersion], r.Name)
			}
			sort.Strings(v.RayResources[gv.GroupVersion])
		}
	}
	return v, nil
}
