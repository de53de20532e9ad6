package kube

import (
	"context"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// The LISTs doctor's snapshot is made of (pkg/load builds it). Each is one paged LIST; each, when
// not nil, is applied to every object as its page arrives, so that the loader trims a page at a
// time and never holds the whole fleet's full objects. Errors come back as the API server sent
// them: the loader decides which refusals end the run and which are gaps it reports.

// ListRayClusters lists the RayClusters of namespace ("" for all) matching selector.
func (c *Clients) ListRayClusters(ctx context.Context, namespace, selector string, each func(*rayv1.RayCluster)) ([]rayv1.RayCluster, error) {
	return ListAll(ctx, selector, pagesOf(c.Ray.RayV1().RayClusters(namespace).List, func(l *rayv1.RayClusterList) []rayv1.RayCluster { return l.Items }, each))
}

// ListRayClustersAsServed is ListRayClusters with each RayCluster's JSON as served (see
// servedPages), for a reader that must keep what the API types drop.
func (c *Clients) ListRayClustersAsServed(ctx context.Context, namespace, selector string, each func(*rayv1.RayCluster, []byte)) ([]rayv1.RayCluster, error) {
	typed := pagesOf(c.Ray.RayV1().RayClusters(namespace).List, func(l *rayv1.RayClusterList) []rayv1.RayCluster { return l.Items }, nil)
	return ListAll(ctx, selector, servedPages(c, namespace, "rayclusters", typed, each))
}

// ListRayServices lists the RayServices of namespace; served, when not nil, sees each with its
// JSON as served.
func (c *Clients) ListRayServices(ctx context.Context, namespace string, served func(*rayv1.RayService, []byte)) ([]rayv1.RayService, error) {
	typed := pagesOf(c.Ray.RayV1().RayServices(namespace).List, func(l *rayv1.RayServiceList) []rayv1.RayService { return l.Items }, nil)
	if served == nil {
		return ListAll(ctx, "", typed)
	}
	return ListAll(ctx, "", servedPages(c, namespace, "rayservices", typed, served))
}

// ListRayJobs lists the RayJobs of namespace, with the fields of each that KubeRay releases
// newer than the API types write (ray.RayJobNewer), by namespace/name: each is read as served
// (servedPages) and decoded for those fields too. RayJobs are few beside pods. served, when not
// nil, sees each with its JSON.
func (c *Clients) ListRayJobs(ctx context.Context, namespace string, served func(*rayv1.RayJob, []byte)) ([]rayv1.RayJob, map[string]ray.RayJobNewer, error) {
	newer := map[string]ray.RayJobNewer{}
	each := func(j *rayv1.RayJob, raw []byte) {
		// A newer field that does not decode (its CRD validates it, so hardly ever) is left
		// unread: the RayJob itself decoded, and no rule may lose it for that field.
		if n, err := ray.RayJobNewerOf(raw); err == nil && !n.IsZero() {
			newer[j.Namespace+"/"+j.Name] = n
		}
		if served != nil {
			served(j, raw)
		}
	}
	typed := pagesOf(c.Ray.RayV1().RayJobs(namespace).List, func(l *rayv1.RayJobList) []rayv1.RayJob { return l.Items }, nil)
	jobs, err := ListAll(ctx, "", servedPages(c, namespace, "rayjobs", typed, each))
	return jobs, newer, err
}

// ListPodsEach lists the pods of namespace matching selector, each decoded pod by pod (podPage),
// in pages that grow (PodPageLimit).
func (c *Clients) ListPodsEach(ctx context.Context, namespace, selector string, each func(*corev1.Pod)) ([]corev1.Pod, error) {
	return listGrowing(ctx, metav1.ListOptions{LabelSelector: selector, Limit: PageSize}, func(ctx context.Context, o metav1.ListOptions) (Page[corev1.Pod], error) {
		return c.podPage(ctx, namespace, o, each)
	}, PodPageLimit)
}

// ListNodes lists every node.
func (c *Clients) ListNodes(ctx context.Context, each func(*corev1.Node)) ([]corev1.Node, error) {
	return ListAll(ctx, "", pagesOf(c.Kube.CoreV1().Nodes().List, func(l *corev1.NodeList) []corev1.Node { return l.Items }, each))
}

// ListServices lists the Services of namespace matching selector.
func (c *Clients) ListServices(ctx context.Context, namespace, selector string) ([]corev1.Service, error) {
	return ListAll(ctx, selector, pagesOf(c.Kube.CoreV1().Services(namespace).List, func(l *corev1.ServiceList) []corev1.Service { return l.Items }, nil))
}

// ListEndpointSlices lists the EndpointSlices of namespace matching selector.
func (c *Clients) ListEndpointSlices(ctx context.Context, namespace, selector string) ([]discoveryv1.EndpointSlice, error) {
	return ListAll(ctx, selector, pagesOf(c.Kube.DiscoveryV1().EndpointSlices(namespace).List, func(l *discoveryv1.EndpointSliceList) []discoveryv1.EndpointSlice { return l.Items }, nil))
}

// ListJobs lists the Jobs of namespace matching selector.
func (c *Clients) ListJobs(ctx context.Context, namespace, selector string, each func(*batchv1.Job)) ([]batchv1.Job, error) {
	return ListAll(ctx, selector, pagesOf(c.Kube.BatchV1().Jobs(namespace).List, func(l *batchv1.JobList) []batchv1.Job { return l.Items }, each))
}

// ListBudgets lists the PodDisruptionBudgets of namespace, all of them: they carry no label to
// select them by (KubeRay creates none, kuberay #5004); which ones cover Ray pods is read from
// their selectors.
func (c *Clients) ListBudgets(ctx context.Context, namespace string) ([]policyv1.PodDisruptionBudget, error) {
	return ListAll(ctx, "", pagesOf(c.Kube.PolicyV1().PodDisruptionBudgets(namespace).List, func(l *policyv1.PodDisruptionBudgetList) []policyv1.PodDisruptionBudget { return l.Items }, nil))
}

// ListNetworkPolicies lists the NetworkPolicies of namespace, all of them: the policy that
// isolates a Ray pod may select it by any label, or by none (a namespace's default deny).
func (c *Clients) ListNetworkPolicies(ctx context.Context, namespace string) ([]networkingv1.NetworkPolicy, error) {
	return ListAll(ctx, "", pagesOf(c.Kube.NetworkingV1().NetworkPolicies(namespace).List, func(l *networkingv1.NetworkPolicyList) []networkingv1.NetworkPolicy { return l.Items }, nil))
}

// ListEventsSelected lists the Events of namespace selected by field (fieldSelector), keeping of
// each page what keep keeps (keep may trim what it keeps): a busy namespace holds thousands of
// Events about worker pods that no rule reads, and they are dropped page by page.
func (c *Clients) ListEventsSelected(ctx context.Context, namespace, fieldSelector string, keep func(*corev1.Event) bool) ([]corev1.Event, error) {
	opts := metav1.ListOptions{FieldSelector: fieldSelector}
	return ListAllWith(ctx, opts, func(ctx context.Context, o metav1.ListOptions) (Page[corev1.Event], error) {
		l, err := c.Kube.CoreV1().Events(namespace).List(ctx, o)
		if err != nil {
			return Page[corev1.Event]{}, err
		}
		kept := l.Items[:0]
		for i := range l.Items {
			if keep(&l.Items[i]) {
				kept = append(kept, l.Items[i])
			}
		}
		// A fresh slice, so the page's dropped Events are not kept alive behind the kept ones.
		return Page[corev1.Event]{Items: append([]corev1.Event(nil), kept...), Continue: l.Continue}, nil
	})
}

// ListRayCronJobs lists the RayCronJobs of namespace (KubeRay v1.7.0), each handed to served with
// its JSON when served is not nil. The plugin's clientset has no such kind: they are read as
// JSON, and client fakes (no rest.Config) hold none.
func (c *Clients) ListRayCronJobs(ctx context.Context, namespace string, served func(*ray.RayCronJob, []byte)) ([]ray.RayCronJob, error) {
	none := func(context.Context, metav1.ListOptions) (Page[ray.RayCronJob], error) {
		return Page[ray.RayCronJob]{}, nil
	}
	each := func(j *ray.RayCronJob, raw []byte) {
		j.ManagedFields = nil
		if served != nil {
			served(j, raw)
		}
	}
	return ListAll(ctx, "", servedPages(c, namespace, "raycronjobs", none, each))
}
