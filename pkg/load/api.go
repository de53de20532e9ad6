package load

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Query says what FromAPI reads.
type Query struct {
	// Namespace to read RayClusters, RayServices, RayJobs, pods and serve Services in; "" for all.
	Namespace string
	// Selector is a label selector for RayClusters (-l); pods are always selected by RayPodSelector.
	Selector string
	// Now stamps the snapshot.
	Now time.Time
	// Ray, when set, also reads Ray's own view of the RayClusters it picks, through their heads'
	// dashboards (doctor's Ray view), once the Kubernetes objects are read.
	Ray *RayQuery
	// Full, when set, is handed each RayCluster, pod, node and Redis cleanup Job whole as its
	// page arrives, before it is trimmed: the bundle renders its files from there,
	// so that its snapshot is trimmed as doctor's is and no whole object is held.
	Full *Full
	// Reads is what the rules read of the Events and submitter pods (diagnose.Reads): without
	// it no Event and no submitter pod is kept.
	Reads state.Reads
	// ClustersListed, when set, hears how many RayClusters were listed as soon as they are,
	// while the other LISTs still run: what a command may start beside them depends on it.
	ClustersListed func(n int)
}

// Labels the serve Service of every KubeRay release carries (ray.io/serve: <name>-serve); listing
// by it reads the serve Services and not every Service in the namespace.
const serveServiceSelector = ray.LabelServe

// FromAPI reads everything doctor looks at with one paged LIST per kind, run concurrently:
// RayClusters, RayServices, RayJobs, Ray pods, nodes, serve Services and their EndpointSlices,
// KubeRay's Redis cleanup Jobs, Deployments (to find the operator), PodDisruptionBudgets, NetworkPolicies, the Events about RayClusters
// and the operator's Warnings about RayJobs and RayServices, and the submitter pods of running
// RayJobs. Nothing is read per object. RayClusters and pods are required: a refusal is an error.
// The rest only sharpen the diagnosis: a refusal is recorded in Snapshot.Blind and doctor goes on.
func FromAPI(ctx context.Context, c *kube.Clients, q Query) (*state.Snapshot, error) {
	s := &state.Snapshot{Now: q.Now, ClustersSelected: q.Selector != ""}
	ns := q.Namespace
	var (
		wg                                     sync.WaitGroup
		errClusters, errPods, errSvcs, errJobs error
		errNodes, errServe, errDeploys         error
		errEvents                              error
		events                                 []corev1.Event
		errEndpoints, errCleanupJobs           error
		clusters                               []rayv1.RayCluster
		services                               []rayv1.RayService
		jobs                                   []rayv1.RayJob
		jobsNewer                              map[string]ray.RayJobNewer
		pods                                   []corev1.Pod
		nodes                                  []corev1.Node
		serve                                  []corev1.Service
		deploys                                []appsv1.Deployment
		endpoints                              []discoveryv1.EndpointSlice
		cleanupJobs                            []batchv1.Job
		submitters                             []corev1.Pod
		errSubmitters, errWarnings             error
		warnings                               []corev1.Event
		budgets                                []policyv1.PodDisruptionBudget
		errBudgets                             error
		policies                               []networkingv1.NetworkPolicy
		errPolicies                            error
		cronJobs                               []ray.RayCronJob
		errCronJobs                            error
		gateways                               []ray.Gateway
		routes                                 []ray.HTTPRoute
		errGateways, errRoutes                 error
		jobSecrets, submitterSecrets           = redact.Set{}, redact.Set{}
		// Pods and RayClusters are trimmed page by page (see state.TrimPod); each goroutine
		// keeps the secrets of what it dropped in a set of its own.
		podSecrets, clusterSecrets = redact.Set{}, redact.Set{}
	)
	full := q.Full
	if full == nil {
		full = &Full{}
	}
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	run(func() {
		trim := func(o *rayv1.RayCluster) { state.TrimCluster(o, clusterSecrets) }
		if full.Cluster == nil {
			clusters, errClusters = c.ListRayClusters(ctx, ns, q.Selector, trim)
		} else {
			// Read as served: what the API types drop is the whole object's too.
			clusters, errClusters = c.ListRayClustersAsServed(ctx, ns, q.Selector, func(o *rayv1.RayCluster, raw []byte) {
				full.Cluster(o, raw)
				trim(o)
			})
		}
		if errClusters == nil && q.ClustersListed != nil {
			q.ClustersListed(len(clusters))
		}
	})
	run(func() {
		services, errSvcs = c.ListRayServices(ctx, ns, full.RayService)
		// Only where a RayService upgrades incrementally: the Gateway and HTTPRoute KubeRay
		// makes for it, as soon as it is known.
		if errSvcs == nil && slices.ContainsFunc(services, func(rs rayv1.RayService) bool { return ray.IncrementalUpgrade(&rs) }) {
			if gateways, errGateways = c.ListGateways(ctx, ns); errGateways == nil {
				routes, errRoutes = c.ListHTTPRoutes(ctx, ns)
			}
		}
	})
	run(func() { cronJobs, errCronJobs = c.ListRayCronJobs(ctx, ns, full.RayCronJob) })
	run(func() {
		jobs, jobsNewer, errJobs = c.ListRayJobs(ctx, ns, full.RayJob)
		// Only with RayJobs that may have one at work, as soon as they are known: their
		// submitter pods, by the Job controller's label.
		var sel string
		if errJobs == nil && q.Reads.SubmitterPods != nil {
			sel = q.Reads.SubmitterPods(jobs)
		}
		if sel != "" {
			submitters, errSubmitters = c.ListPodsEach(ctx, ns, sel, func(p *corev1.Pod) { see(full.Pod, p); state.TrimPod(p, submitterSecrets) })
		}
	})
	run(func() {
		pods, errPods = c.ListPodsEach(ctx, ns, ray.RayPodSelector, func(p *corev1.Pod) { see(full.Pod, p); state.TrimPod(p, podSecrets) })
	})
	run(func() {
		nodes, errNodes = c.ListNodes(ctx, func(n *corev1.Node) { see(full.Node, n); state.TrimNode(n) })
	})
	run(func() { serve, errServe = c.ListServices(ctx, ns, serveServiceSelector) })
	run(func() {
		// The EndpointSlice controller copies a Service's labels onto its slices, so the serve
		// Services' label selects their slices too: one LIST, not one per RayService.
		endpoints, errEndpoints = c.ListEndpointSlices(ctx, ns, serveServiceSelector)
	})
	run(func() {
		// KubeRay's Redis cleanup Jobs only (gcs-ft-finalizer-stuck): one LIST by their label.
		cleanupJobs, errCleanupJobs = c.ListJobs(ctx, ns, ray.RedisCleanupJobSelector, func(o *batchv1.Job) { see(full.Job, o); state.TrimJob(o, jobSecrets) })
	})
	run(func() { deploys, errDeploys = c.ListDeployments(ctx, "") })
	run(func() { budgets, errBudgets = c.ListBudgets(ctx, ns) })
	run(func() { policies, errPolicies = c.ListNetworkPolicies(ctx, ns) })
	run(func() { events, errEvents = headEvents(ctx, c, ns, q.Reads.KeepEvent) })
	run(func() { warnings, errWarnings = operatorWarnings(ctx, c, ns, q.Reads.KeepWarning) })
	wg.Wait()

	// Required kinds first, in the order a person fixes them: CRDs, then pods.
	if errClusters != nil {
		return nil, kube.Explain(errClusters, kube.Request{Verb: "list", Resource: "rayclusters.ray.io", Namespace: ns, Host: c.Host()})
	}
	if errPods != nil {
		return nil, kube.Explain(errPods, kube.Request{Verb: "list", Resource: "pods", Namespace: ns, Host: c.Host()})
	}
	s.Clusters, s.Pods = clusters, pods
	s.Secrets = podSecrets
	s.Secrets.Merge(clusterSecrets)
	s.Secrets.Merge(jobSecrets)
	s.Secrets.Merge(submitterSecrets)
	if apierrors.IsNotFound(errGateways) {
		// The cluster has no Gateway API: a fact the rules read, not a gap.
		s.NoGatewayAPI, errGateways = true, nil
	}
	if apierrors.IsNotFound(errCronJobs) {
		// Every KubeRay release before v1.7.0, and v1.7.0 installed without the RayCronJob CRD:
		// there is nothing to see, and nothing to say about it.
		errCronJobs = nil
	}
	optional := []struct {
		err  error
		req  kube.Request
		keep func()
		as   string // the Gap's resource, when not the request's
	}{
		{errSvcs, kube.Request{Verb: "list", Resource: "rayservices.ray.io", Namespace: ns}, func() { s.Services = services }, ""},
		{errJobs, kube.Request{Verb: "list", Resource: "rayjobs.ray.io", Namespace: ns}, func() { s.Jobs, s.JobsNewer = jobs, jobsNewer }, ""},
		{errNodes, kube.Request{Verb: "list", Resource: "nodes"}, func() { s.Nodes = nodes }, ""},
		{errServe, kube.Request{Verb: "list", Resource: "services", Namespace: ns}, func() { s.Serve = serve }, ""},
		{errEvents, kube.Request{Verb: "list", Resource: "events", Namespace: ns}, func() { s.Events = append(s.Events, events...) }, ""},
		{errWarnings, kube.Request{Verb: "list", Resource: "events", Namespace: ns}, func() { s.Events = append(s.Events, warnings...) }, "operator warnings"},
		{errEndpoints, kube.Request{Verb: "list", Resource: "endpointslices.discovery.k8s.io", Namespace: ns}, func() { s.ServeEndpoints = endpoints }, ""},
		{errCleanupJobs, kube.Request{Verb: "list", Resource: "jobs.batch", Namespace: ns}, func() { s.CleanupJobs = cleanupJobs }, ""},
		{errSubmitters, kube.Request{Verb: "list", Resource: "pods", Namespace: ns}, func() { s.SubmitterPods = submitters }, "submitter pods"},
		{errBudgets, kube.Request{Verb: "list", Resource: "poddisruptionbudgets.policy", Namespace: ns}, func() { s.PDBs = budgets }, ""},
		{errPolicies, kube.Request{Verb: "list", Resource: "networkpolicies.networking.k8s.io", Namespace: ns}, func() { s.NetworkPolicies = policies }, ""},
		{errCronJobs, kube.Request{Verb: "list", Resource: "raycronjobs.ray.io", Namespace: ns}, func() { s.CronJobs = cronJobs }, ""},
		{errGateways, kube.Request{Verb: "list", Resource: "gateways.gateway.networking.k8s.io", Namespace: ns}, func() { s.Gateways = gateways }, ""},
		{errRoutes, kube.Request{Verb: "list", Resource: "httproutes.gateway.networking.k8s.io", Namespace: ns}, func() { s.HTTPRoutes = routes }, ""},
	}
	for _, o := range optional {
		if o.err == nil {
			o.keep()
			continue
		}
		o.req.Host = c.Host()
		gap, err := blindOr(o.err, o.req)
		if err != nil {
			return nil, err
		}
		if o.as != "" {
			gap.Resource = o.as
		}
		s.Blind = append(s.Blind, gap)
	}
	if errDeploys != nil && fault.KindOf(errDeploys) == fault.Forbidden && ns != "" {
		// Cannot look cluster-wide: the operator may still run in the namespace being checked.
		var errNS error
		if deploys, errNS = c.ListDeployments(ctx, ns); errNS == nil && len(ray.FindOperators(deploys)) > 0 {
			errDeploys = nil
		}
	}
	switch {
	case errDeploys == nil:
		s.Deployments = deploys
	case fault.KindOf(errDeploys) == fault.Forbidden:
		s.Blind = append(s.Blind, state.Gap{Resource: "deployments", Reason: errDeploys.Error()})
	default:
		return nil, errDeploys
	}
	if q.Ray != nil {
		s.Ray, s.RayAsked = rayViews(ctx, c, s, *q.Ray, q.Reads.Checked), true
		for _, v := range s.Ray {
			if len(v.Failed) > 0 {
				s.Blind = append(s.Blind, state.Gap{Resource: "Ray's view of " + v.Namespace + "/" + v.Cluster, Reason: strings.Join(v.Failed, "; ")})
			}
		}
	}
	return s, nil
}

// blindOr turns a refusal to list an optional kind into a Gap, and anything else into an error.
// A 404 on RayServices or RayJobs means an old CRD set without them: nothing to see there.
// The Gap names the resource without its group ("rayservices", "endpointslices").
func blindOr(err error, req kube.Request) (state.Gap, error) {
	resource, group, _ := strings.Cut(req.Resource, ".")
	if group == "ray.io" && apierrors.IsNotFound(err) {
		return state.Gap{Resource: resource, Reason: "the API has no " + req.Resource + " (CRD not installed)"}, nil
	}
	if apierrors.IsForbidden(err) {
		return state.Gap{Resource: resource, Reason: kube.Explain(err, req).Error()}, nil
	}
	return state.Gap{}, kube.Explain(err, req)
}

// headEvents reads the Events about RayClusters in namespace ("" for all) with one paged LIST
// selected by field (involvedObject.kind=RayCluster), never one request per cluster, keeping the
// head lifecycle Events rules read (keep), trimmed as each page arrives.
func headEvents(ctx context.Context, c *kube.Clients, namespace string, keep func(*corev1.Event) bool) ([]corev1.Event, error) {
	return c.ListEventsSelected(ctx, namespace, ray.EventFieldSelector, keptTrimmed(keep))
}

// operatorWarnings reads the operator's Warning Events about RayJobs and RayServices the same way
// (ray.WarningFieldSelector, keeping what keep keeps).
func operatorWarnings(ctx context.Context, c *kube.Clients, namespace string, keep func(*corev1.Event) bool) ([]corev1.Event, error) {
	return c.ListEventsSelected(ctx, namespace, ray.WarningFieldSelector, keptTrimmed(keep))
}

// keptTrimmed keeps what keep keeps, trimmed (state.TrimEvent).
func keptTrimmed(keep func(*corev1.Event) bool) func(*corev1.Event) bool {
	return func(ev *corev1.Event) bool {
		if !state.Keeps(keep, ev) {
			return false
		}
		state.TrimEvent(ev)
		return true
	}
}

// API is a live cluster as a source of snapshots, for code that reads one through an interface
// of its own (chaos head-kill's doctor advice): a fake stands in for it in that code's tests.
type API struct{ *kube.Clients }

// LoadSnapshot is FromAPI.
func (a API) LoadSnapshot(ctx context.Context, q Query) (*state.Snapshot, error) {
	return FromAPI(ctx, a.Clients, q)
}
