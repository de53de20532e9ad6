package kube

import (
	"context"
	"strings"
	"sync"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// SnapshotQuery says what LoadSnapshot reads.
type SnapshotQuery struct {
	// Namespace to read RayClusters, RayServices, RayJobs, pods and serve Services in; "" for all.
	Namespace string
	// Selector is a label selector for RayClusters (-l); pods are always selected by RayPodSelector.
	Selector string
	// Now stamps the snapshot.
	Now time.Time
	// Ray, when set, also reads Ray's own view of the RayClusters it picks, through their heads'
	// dashboards (doctor's Ray view), once the Kubernetes objects are read.
	Ray *RayQuery
	// Whole keeps every listed object whole (no TrimPod, TrimCluster, TrimJob, TrimNode): the
	// bundle writes the objects doctor read, and the rules read the same snapshot either way
	// (TestTrimChangesNothing).
	Whole bool
}

// Labels the serve Service of every KubeRay release carries (ray.io/serve: <name>-serve); listing
// by it reads the serve Services and not every Service in the namespace.
const serveServiceSelector = ray.LabelServe

// LoadSnapshot reads everything doctor looks at with one paged LIST per kind, run concurrently:
// RayClusters, RayServices, RayJobs, Ray pods, nodes, serve Services and their EndpointSlices,
// KubeRay's Redis cleanup Jobs, Deployments (to find the operator), the Events about RayClusters
// and the operator's Warnings about RayJobs and RayServices, and the submitter pods of running
// RayJobs. Nothing is read per object. RayClusters and pods are required: a refusal is an error.
// The rest only sharpen the diagnosis: a refusal is recorded in Snapshot.Blind and doctor goes on.
func (c *Clients) LoadSnapshot(ctx context.Context, q SnapshotQuery) (*diagnose.Snapshot, error) {
	s := &diagnose.Snapshot{Now: q.Now, ClustersSelected: q.Selector != ""}
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
		pods                                   []corev1.Pod
		nodes                                  []corev1.Node
		serve                                  []corev1.Service
		deploys                                []appsv1.Deployment
		endpoints                              []discoveryv1.EndpointSlice
		cleanupJobs                            []batchv1.Job
		submitters                             []corev1.Pod
		errSubmitters, errWarnings             error
		warnings                               []corev1.Event
		jobSecrets, submitterSecrets           = diagnose.Secrets{}, diagnose.Secrets{}
		// Pods and RayClusters are trimmed page by page (see diagnose.TrimPod); each goroutine
		// keeps the secrets of what it dropped in a set of its own.
		podSecrets, clusterSecrets = diagnose.Secrets{}, diagnose.Secrets{}
	)
	trim := func(f func()) {
		if !q.Whole {
			f()
		}
	}
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	run(func() {
		clusters, errClusters = ListAll(ctx, q.Selector, pagesOf(c.Ray.RayV1().RayClusters(ns).List, func(l *rayv1.RayClusterList) []rayv1.RayCluster { return l.Items }, func(o *rayv1.RayCluster) { trim(func() { diagnose.TrimCluster(o, clusterSecrets) }) }))
	})
	run(func() {
		services, errSvcs = ListAll(ctx, "", pagesOf(c.Ray.RayV1().RayServices(ns).List, func(l *rayv1.RayServiceList) []rayv1.RayService { return l.Items }, nil))
	})
	run(func() {
		jobs, errJobs = ListAll(ctx, "", pagesOf(c.Ray.RayV1().RayJobs(ns).List, func(l *rayv1.RayJobList) []rayv1.RayJob { return l.Items }, nil))
		// Only with RayJobs that may have one at work, as soon as they are known: their
		// submitter pods, by the Job controller's label.
		if sel := diagnose.SubmitterPodSelector(jobs); errJobs == nil && sel != "" {
			submitters, errSubmitters = ListAll(ctx, sel, func(ctx context.Context, o metav1.ListOptions) (Page[corev1.Pod], error) {
				return c.podPage(ctx, ns, o, func(p *corev1.Pod) { trim(func() { diagnose.TrimPod(p, submitterSecrets) }) })
			})
		}
	})
	run(func() {
		pods, errPods = ListAll(ctx, ray.RayPodSelector, func(ctx context.Context, o metav1.ListOptions) (Page[corev1.Pod], error) {
			return c.podPage(ctx, ns, o, func(p *corev1.Pod) { trim(func() { diagnose.TrimPod(p, podSecrets) }) })
		})
	})
	run(func() {
		nodes, errNodes = ListAll(ctx, "", pagesOf(c.Kube.CoreV1().Nodes().List, func(l *corev1.NodeList) []corev1.Node { return l.Items }, func(n *corev1.Node) { trim(func() { diagnose.TrimNode(n) }) }))
	})
	run(func() {
		serve, errServe = ListAll(ctx, serveServiceSelector, pagesOf(c.Kube.CoreV1().Services(ns).List, func(l *corev1.ServiceList) []corev1.Service { return l.Items }, nil))
	})
	run(func() {
		// The EndpointSlice controller copies a Service's labels onto its slices, so the serve
		// Services' label selects their slices too: one LIST, not one per RayService.
		endpoints, errEndpoints = ListAll(ctx, serveServiceSelector, pagesOf(c.Kube.DiscoveryV1().EndpointSlices(ns).List, func(l *discoveryv1.EndpointSliceList) []discoveryv1.EndpointSlice { return l.Items }, nil))
	})
	run(func() {
		// KubeRay's Redis cleanup Jobs only (gcs-ft-finalizer-stuck): one LIST by their label.
		cleanupJobs, errCleanupJobs = ListAll(ctx, diagnose.RedisCleanupJobSelector, pagesOf(c.Kube.BatchV1().Jobs(ns).List, func(l *batchv1.JobList) []batchv1.Job { return l.Items }, func(o *batchv1.Job) { trim(func() { diagnose.TrimJob(o, jobSecrets) }) }))
	})
	run(func() { deploys, errDeploys = c.ListDeployments(ctx, "") })
	run(func() { events, errEvents = c.listHeadEvents(ctx, ns) })
	run(func() { warnings, errWarnings = c.listWarnings(ctx, ns) })
	wg.Wait()

	// Required kinds first, in the order a person fixes them: CRDs, then pods.
	if errClusters != nil {
		return nil, Explain(errClusters, Request{Verb: "list", Resource: "rayclusters.ray.io", Namespace: ns, Host: c.Host()})
	}
	if errPods != nil {
		return nil, Explain(errPods, Request{Verb: "list", Resource: "pods", Namespace: ns, Host: c.Host()})
	}
	s.Clusters, s.Pods = clusters, pods
	s.Secrets = podSecrets
	s.Secrets.Merge(clusterSecrets)
	s.Secrets.Merge(jobSecrets)
	s.Secrets.Merge(submitterSecrets)
	optional := []struct {
		err  error
		req  Request
		keep func()
		as   string // the Gap's resource, when not the request's
	}{
		{errSvcs, Request{Verb: "list", Resource: "rayservices.ray.io", Namespace: ns}, func() { s.Services = services }, ""},
		{errJobs, Request{Verb: "list", Resource: "rayjobs.ray.io", Namespace: ns}, func() { s.Jobs = jobs }, ""},
		{errNodes, Request{Verb: "list", Resource: "nodes"}, func() { s.Nodes = nodes }, ""},
		{errServe, Request{Verb: "list", Resource: "services", Namespace: ns}, func() { s.Serve = serve }, ""},
		{errEvents, Request{Verb: "list", Resource: "events", Namespace: ns}, func() { s.Events = append(s.Events, events...) }, ""},
		{errWarnings, Request{Verb: "list", Resource: "events", Namespace: ns}, func() { s.Events = append(s.Events, warnings...) }, "operator warnings"},
		{errEndpoints, Request{Verb: "list", Resource: "endpointslices.discovery.k8s.io", Namespace: ns}, func() { s.ServeEndpoints = endpoints }, ""},
		{errCleanupJobs, Request{Verb: "list", Resource: "jobs.batch", Namespace: ns}, func() { s.CleanupJobs = cleanupJobs }, ""},
		{errSubmitters, Request{Verb: "list", Resource: "pods", Namespace: ns}, func() { s.SubmitterPods = submitters }, "submitter pods"},
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
		if deploys, errNS = c.ListDeployments(ctx, ns); errNS == nil && len(diagnose.FindOperators(deploys)) > 0 {
			errDeploys = nil
		}
	}
	switch {
	case errDeploys == nil:
		s.Deployments = deploys
	case fault.KindOf(errDeploys) == fault.Forbidden:
		s.Blind = append(s.Blind, diagnose.Gap{Resource: "deployments", Reason: errDeploys.Error()})
	default:
		return nil, errDeploys
	}
	if q.Ray != nil {
		s.Ray, s.RayAsked = readRayViews(ctx, s, *q.Ray, c.OpenTunnel), true
		for _, v := range s.Ray {
			if len(v.Failed) > 0 {
				s.Blind = append(s.Blind, diagnose.Gap{Resource: "Ray's view of " + v.Namespace + "/" + v.Cluster, Reason: strings.Join(v.Failed, "; ")})
			}
		}
	}
	return s, nil
}

// blindOr turns a refusal to list an optional kind into a Gap, and anything else into an error.
// A 404 on RayServices or RayJobs means an old CRD set without them: nothing to see there.
// The Gap names the resource without its group ("rayservices", "endpointslices").
func blindOr(err error, req Request) (diagnose.Gap, error) {
	resource, group, _ := strings.Cut(req.Resource, ".")
	if group == "ray.io" && apierrors.IsNotFound(err) {
		return diagnose.Gap{Resource: resource, Reason: "the API has no " + req.Resource + " (CRD not installed)"}, nil
	}
	if apierrors.IsForbidden(err) {
		return diagnose.Gap{Resource: resource, Reason: Explain(err, req).Error()}, nil
	}
	return diagnose.Gap{}, Explain(err, req)
}

// RayNames lists the names of RayClusters and RayServices in namespace ("" for all), for shell
// completion of doctor's NAME argument. One LIST each; an error yields what was read.
func (c *Clients) RayNames(ctx context.Context, namespace string) (clusters, services []string) {
	if l, err := c.Ray.RayV1().RayClusters(namespace).List(ctx, metav1.ListOptions{Limit: PageSize}); err == nil {
		for _, rc := range l.Items {
			clusters = append(clusters, rc.Name)
		}
	}
	if l, err := c.Ray.RayV1().RayServices(namespace).List(ctx, metav1.ListOptions{Limit: PageSize}); err == nil {
		for _, rs := range l.Items {
			services = append(services, rs.Name)
		}
	}
	return clusters, services
}
