package kube

import (
	"context"
	"sync"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// byCluster indexes Ray pods by "namespace/cluster" (their ray.io/cluster label), so a cluster's
// pods are found without scanning every pod.
const byCluster = "raycluster"

// byNode indexes Ray pods by node, so a node going NotReady re-examines the clusters on it.
const byNode = "node"

// ClusterInformers are the caches of the long-running modes (the watchdog, and doctor's watch): Ray pods
// (label ray.io/is-ray-node=yes), RayClusters and, when stuck heads may be force-deleted, nodes. Each is one LIST then a WATCH; client-go's
// reflectors list again after an expired watch or an API server restart, so the caches heal
// themselves. Every change is reported as the key of the RayCluster it concerns.
type ClusterInformers struct {
	c         *Clients
	namespace string
	pods      cache.SharedIndexInformer
	clusters  cache.SharedIndexInformer
	nodes     cache.SharedIndexInformer
	// events: the head lifecycle Events about RayClusters (nil when they may not be listed; then
	// eventsBlind says why and head-recreate-loop does not run).
	events      cache.SharedIndexInformer
	eventsBlind string

	shape CacheShape

	fatalOnce sync.Once
	fatal     chan error
	// Warn hears the errors informers retry after (connection refused while the API server
	// restarts, expired watches); nil drops them.
	Warn func(resource string, err error)
}

// CacheShape is what the caches keep of what they list and watch: the loader's choice (pkg/load,
// after the rules), which this package does not make.
type CacheShape struct {
	// Trim trims a pod, RayCluster, node or Event as it arrives, before it is cached, from the
	// informers' own goroutines; nil keeps them whole but for their managed fields. Pods are
	// then cached encoded (packedPod), so sharing their strings across pods gains nothing.
	Trim func(obj any)
	// EventSelector selects by field the Events to cache ("" caches none), and KeepEvent, of
	// those, the ones a change of which re-examines the RayCluster they are about.
	EventSelector string
	KeepEvent     func(*corev1.Event) bool
}

// NewClusterInformers builds the caches for namespace ("" for all), shaped by shape; onChange
// hears the RayCluster each change concerns. withNodes adds a node cache (cluster-wide list and
// watch of nodes).
func (c *Clients) NewClusterInformers(namespace string, withNodes bool, shape CacheShape, onChange func(types.NamespacedName)) (*ClusterInformers, error) {
	h := &ClusterInformers{c: c, namespace: namespace, fatal: make(chan error, 1), shape: shape}
	// Plain informers over list/watch functions rather than client-go's informer factories: the
	// factories pull every API group's informers and listers into the binary.
	pods, clusters := c.Kube.CoreV1().Pods(namespace), c.Ray.RayV1().RayClusters(namespace)
	h.pods = newInformer(h.trimmedPages(listWatch(pods.List, pods.Watch, Selected{Label: ray.RayPodSelector})), &corev1.Pod{}, cache.Indexers{})
	h.clusters = newInformer(h.trimmedPages(listWatch(clusters.List, clusters.Watch, Selected{})), &rayv1.RayCluster{}, cache.Indexers{})
	if err := h.pods.AddIndexers(cache.Indexers{byCluster: podClusterIndex, byNode: podNodeIndex}); err != nil {
		return nil, err
	}
	if err := h.addEvents(); err != nil {
		return nil, err
	}
	if withNodes {
		nodes := c.Kube.CoreV1().Nodes()
		h.nodes = newInformer(listWatch(nodes.List, nodes.Watch, Selected{}), &corev1.Node{}, cache.Indexers{})
	}

	podKey := func(obj any) {
		if key, _, ok := podPlace(obj); ok {
			onChange(key)
		}
	}
	clusterKey := func(obj any) {
		if m, err := metaOf(obj); err == nil {
			onChange(types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()})
		}
	}
	nodeChanged := func(obj any) {
		m, err := metaOf(obj)
		if err != nil {
			return
		}
		pods, _ := h.pods.GetIndexer().ByIndex(byNode, m.GetName())
		for _, o := range pods {
			podKey(o)
		}
	}
	for _, reg := range []struct {
		inf      cache.SharedIndexInformer
		resource string
		ns       string
		handle   func(any)
	}{
		{h.pods, "pods", namespace, podKey},
		{h.clusters, "rayclusters.ray.io", namespace, clusterKey},
		{h.nodes, "nodes", "", nodeChanged},
		{h.events, "events", namespace, h.eventCluster(onChange)},
	} {
		if reg.inf == nil {
			continue
		}
		_ = reg.inf.SetTransform(h.transform)
		handle := reg.handle
		if _, err := reg.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    handle,
			UpdateFunc: func(_, obj any) { handle(obj) },
			DeleteFunc: handle,
		}); err != nil {
			return nil, err
		}
		resource, ns := reg.resource, reg.ns
		_ = reg.inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
			if isFatalWatchError(err) {
				h.fatalOnce.Do(func() { h.fatal <- syncError(resource, ns, err, c.Host()) })
				return
			}
			if h.Warn != nil {
				h.Warn(resource, err)
			}
		})
	}
	return h, nil
}

// Start runs the informers until ctx ends and waits for their first LIST. A LIST refused by RBAC
// is returned as one line naming the permission.
func (h *ClusterInformers) Start(ctx context.Context) error {
	go h.pods.RunWithContext(ctx)
	go h.clusters.RunWithContext(ctx)
	synced := []cache.InformerSynced{h.pods.HasSynced, h.clusters.HasSynced}
	if h.nodes != nil {
		go h.nodes.RunWithContext(ctx)
		synced = append(synced, h.nodes.HasSynced)
	}
	if h.events != nil {
		go h.events.RunWithContext(ctx)
		synced = append(synced, h.events.HasSynced)
	}
	syncCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan bool, 1)
	go func() { done <- cache.WaitForCacheSync(syncCtx.Done(), synced...) }()
	select {
	case err := <-h.fatal:
		return err
	case ok := <-done:
		if !ok {
			return ctx.Err()
		}
		return nil
	}
}

// transform is what the caches keep of an object: what the shape keeps (trim), and of a pod
// that, packed (a watchdog holds every Ray pod of the cluster for as long as it runs). The
// informers call it from their own goroutines, on objects just decoded and not yet shared.
func (h *ClusterInformers) transform(obj any) (any, error) {
	obj, err := h.trim(obj)
	if p, ok := obj.(*corev1.Pod); ok && err == nil {
		return packPod(p), nil
	}
	return obj, err
}

// trim keeps of obj, in place, what the shape keeps.
func (h *ClusterInformers) trim(obj any) (any, error) {
	switch obj.(type) {
	case *corev1.Pod, *rayv1.RayCluster, *corev1.Node, *corev1.Event:
		if h.shape.Trim != nil {
			h.shape.Trim(obj)
			return obj, nil
		}
	}
	return stripManagedFields(obj)
}

// trimmedPages makes an informer's first LIST come in pages (500 objects each, client-go's pager)
// and trims each page as it arrives, before the pager gathers them: the full objects of one page
// at a time, not of the whole fleet, are in memory at once. client-go's reflector lists first
// with resourceVersion "0", which the API server answers from its cache in one piece, ignoring
// the page size; resourceVersion "" (the latest) is paged. A relist after an expired watch keeps
// client-go's choice (one piece, from the cache): that is rare, and its objects are trimmed too.
func (h *ClusterInformers) trimmedPages(lw *cache.ListWatch) *cache.ListWatch {
	list := lw.ListWithContextFunc
	lw.ListWithContextFunc = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		if o.ResourceVersion == "0" {
			o.ResourceVersion = ""
		}
		obj, err := list(ctx, o)
		if err != nil {
			return obj, err
		}
		items, err := meta.ExtractList(obj) // pointers into the list's items: trimmed in place
		if err != nil {
			return obj, nil
		}
		for _, it := range items {
			_, _ = h.trim(it)
		}
		return obj, nil
	}
	return lw
}

// Fatal delivers an error the informers cannot retry past (RBAC revoked while running).
func (h *ClusterInformers) Fatal() <-chan error { return h.fatal }

// Cluster is the cached RayCluster key names.
func (h *ClusterInformers) Cluster(key types.NamespacedName) (*rayv1.RayCluster, bool) {
	obj, exists, err := h.clusters.GetStore().GetByKey(key.Namespace + "/" + key.Name)
	if err != nil || !exists {
		return nil, false
	}
	rc, ok := obj.(*rayv1.RayCluster)
	return rc, ok
}

// ClusterPods are the cached Ray pods of the RayCluster key names (by their ray.io/cluster
// label), decoded: each call returns new pods, which the caller may keep or change.
func (h *ClusterInformers) ClusterPods(key types.NamespacedName) []*corev1.Pod {
	objs, _ := h.pods.GetIndexer().ByIndex(byCluster, key.Namespace+"/"+key.Name)
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p := cachedPod(o); p != nil {
			out = append(out, p)
		}
	}
	return out
}

// WatchesNodes says whether nodes are cached (withNodes).
func (h *ClusterInformers) WatchesNodes() bool { return h.nodes != nil }

// Node is the cached node called name; false without a node cache or without that node.
func (h *ClusterInformers) Node(name string) (*corev1.Node, bool) {
	if h.nodes == nil {
		return nil, false
	}
	obj, exists, _ := h.nodes.GetStore().GetByKey(name)
	if !exists {
		return nil, false
	}
	n, ok := obj.(*corev1.Node)
	return n, ok
}

// Keys lists every cached RayCluster, to examine them all once the caches are warm.
func (h *ClusterInformers) Keys() []types.NamespacedName {
	var out []types.NamespacedName
	for _, k := range h.clusters.GetStore().ListKeys() {
		ns, name, err := cache.SplitMetaNamespaceKey(k)
		if err == nil {
			out = append(out, types.NamespacedName{Namespace: ns, Name: name})
		}
	}
	return out
}

func podClusterIndex(obj any) ([]string, error) {
	key, _, ok := podPlace(obj)
	if !ok {
		return nil, nil
	}
	return []string{key.Namespace + "/" + key.Name}, nil
}

func podNodeIndex(obj any) ([]string, error) {
	_, node, _ := podPlace(obj)
	if node == "" {
		return nil, nil
	}
	return []string{node}, nil
}

func metaOf(obj any) (metav1.Object, error) { return meta.Accessor(storedObject(obj)) }
