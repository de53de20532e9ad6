package kube

import (
	"context"
	"sync"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// ClusterWatch says what to follow of one Ray cluster (or RayService) while an experiment runs.
// Each kind is one LIST and a WATCH (an informer, so expired watches re-list by themselves).
type ClusterWatch struct {
	Namespace string
	// PodSelector selects the pods to follow (ray.io/cluster=NAME, or every Ray pod of the
	// namespace for a RayService, whose new cluster has a new name).
	PodSelector string
	// RayService, when set, is followed by name; RayClusters are followed namespace-wide then
	// (a RayService may switch to a new cluster), else only Cluster.
	RayService string
	Cluster    string

	OnPod        func(p *corev1.Pod, deleted bool)
	OnRayCluster func(rc *rayv1.RayCluster, deleted bool)
	OnRayService func(rs *rayv1.RayService, deleted bool)
}

// Run starts the watches and returns once every one has listed (so what follows is a change),
// or with the first error, or with startup's error when startup ends first (Ctrl-C, or a start-up
// deadline: informers retry a failing LIST forever). The watches run until ctx ends; errs hears
// an error that ends one (e.g. RBAC), explained.
func (c *Clients) RunClusterWatch(ctx, startup context.Context, w ClusterWatch) (errs <-chan error, err error) {
	ns := w.Namespace
	out := make(chan error, 3)
	var wg sync.WaitGroup
	start := func(lw *cache.ListWatch, obj runtime.Object, req Request, handle func(any, bool)) chan struct{} {
		synced := make(chan struct{})
		inf := newInformer(lw, obj, cache.Indexers{})
		_ = inf.SetTransform(stripManagedFields)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := runInformer(ctx, inf, req, synced, handle); err != nil && ctx.Err() == nil {
				out <- err
			}
		}()
		return synced
	}
	req := func(resource string) Request {
		return Request{Verb: "watch", Resource: resource, Namespace: ns, Host: c.Host()}
	}
	var waits []chan struct{}
	podSel := w.PodSelector
	pods := c.Kube.CoreV1().Pods(ns)
	waits = append(waits, start(listWatch(pods.List, pods.Watch, Selected{Label: podSel}), &corev1.Pod{}, req("pods"), func(obj any, deleted bool) {
		if p, ok := obj.(*corev1.Pod); ok && w.OnPod != nil {
			w.OnPod(p, deleted)
		}
	}))
	clusterField := ""
	if w.RayService == "" {
		clusterField = fields.OneTermEqualSelector("metadata.name", w.Cluster).String()
	}
	clusters := c.Ray.RayV1().RayClusters(ns)
	waits = append(waits, start(listWatch(clusters.List, clusters.Watch, Selected{Field: clusterField}), &rayv1.RayCluster{}, req("rayclusters.ray.io"), func(obj any, deleted bool) {
		if rc, ok := obj.(*rayv1.RayCluster); ok && w.OnRayCluster != nil {
			w.OnRayCluster(rc, deleted)
		}
	}))
	if w.RayService != "" {
		svcField := fields.OneTermEqualSelector("metadata.name", w.RayService).String()
		services := c.Ray.RayV1().RayServices(ns)
		waits = append(waits, start(listWatch(services.List, services.Watch, Selected{Field: svcField}), &rayv1.RayService{}, req("rayservices.ray.io"), func(obj any, deleted bool) {
			if rs, ok := obj.(*rayv1.RayService); ok && w.OnRayService != nil {
				w.OnRayService(rs, deleted)
			}
		}))
	}
	// errs ends when every watch has (with ctx), so a reader of it ends too.
	go func() { wg.Wait(); close(out) }()
	for _, s := range waits {
		select {
		case <-s:
		case err, ok := <-out:
			if !ok {
				return nil, ctx.Err()
			}
			return nil, err
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-startup.Done():
			return nil, startup.Err()
		}
	}
	return out, nil
}

// GetRayCluster reads one named RayCluster (the head kill's target).
func (c *Clients) GetRayCluster(ctx context.Context, namespace, name string) (*rayv1.RayCluster, error) {
	return getExplained(ctx, c, "rayclusters.ray.io", namespace, name, c.Ray.RayV1().RayClusters(namespace).Get)
}

// GetRayService reads one named RayService (a rayservice/NAME target).
func (c *Clients) GetRayService(ctx context.Context, namespace, name string) (*rayv1.RayService, error) {
	return getExplained(ctx, c, "rayservices.ray.io", namespace, name, c.Ray.RayV1().RayServices(namespace).Get)
}
