package load

import (
	"sync"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Informers are the caches of the long-running modes (the watchdog, and doctor's watch), shaped
// for the rules: every object trimmed as it arrives, as FromAPI trims its pages, and the Events
// cached those about a head's lifecycle. Snapshot gives one RayCluster's state as the rules read it.
type Informers struct {
	*kube.ClusterInformers

	// secrets holds the secret values of what the trimming dropped, for the redactor.
	secretsMu sync.Mutex
	secrets   redact.Set
}

// NewInformers builds the caches for namespace ("" for all); onChange hears the RayCluster each
// change concerns. withNodes adds a node cache (cluster-wide list and watch of nodes). keepEvent
// keeps the Events about RayClusters the rules read (diagnose.KeepEvent).
func NewInformers(c *kube.Clients, namespace string, withNodes bool, keepEvent func(*corev1.Event) bool, onChange func(types.NamespacedName)) (*Informers, error) {
	h := &Informers{secrets: redact.Set{}}
	inf, err := c.NewClusterInformers(namespace, withNodes, kube.CacheShape{
		Trim:          h.trim,
		EventSelector: ray.EventFieldSelector,
		KeepEvent:     func(ev *corev1.Event) bool { return state.Keeps(keepEvent, ev) },
	}, onChange)
	if err != nil {
		return nil, err
	}
	h.ClusterInformers = inf
	return h, nil
}

// trim keeps of an object what the rules and plans read (state.TrimPod and the others), and
// the secret values of what it drops. A pod's strings are not shared: the cache keeps pods
// encoded (kube.CacheShape).
func (h *Informers) trim(obj any) {
	switch o := obj.(type) {
	case *corev1.Pod:
		h.secretsMu.Lock()
		state.TrimPodToPack(o, h.secrets)
		h.secretsMu.Unlock()
	case *rayv1.RayCluster:
		h.secretsMu.Lock()
		state.TrimCluster(o, h.secrets)
		h.secretsMu.Unlock()
	case *corev1.Node:
		state.TrimNode(o)
	case *corev1.Event:
		state.TrimEvent(o)
	}
}

// Snapshot is the cached state of one RayCluster, its Ray pods, their nodes and the Events about
// it, in the shape diagnose.Diagnose reads. ok is false when the RayCluster is not (or no longer)
// there.
func (h *Informers) Snapshot(key types.NamespacedName, now time.Time) (*state.Snapshot, bool) {
	rc, ok := h.Cluster(key)
	if !ok {
		return nil, false
	}
	s := &state.Snapshot{Now: now, Clusters: []rayv1.RayCluster{*rc}, Secrets: redact.Set{}}
	h.secretsMu.Lock()
	s.Secrets.Merge(h.secrets)
	h.secretsMu.Unlock()
	nodes := map[string]bool{}
	for _, p := range h.ClusterPods(key) {
		s.Pods = append(s.Pods, *p)
		if p.Spec.NodeName == "" || nodes[p.Spec.NodeName] {
			continue
		}
		nodes[p.Spec.NodeName] = true
		if n, ok := h.Node(p.Spec.NodeName); ok {
			s.Nodes = append(s.Nodes, *n)
		}
	}
	if !h.WatchesNodes() {
		s.Blind = append(s.Blind, state.Gap{Resource: "nodes", Reason: "the watchdog reads nodes only when it may force-delete stuck heads"})
	}
	events, blind := h.ClusterEvents(key)
	if blind != "" {
		s.Blind = append(s.Blind, state.Gap{Resource: "events", Reason: blind})
	}
	for _, ev := range events {
		s.Events = append(s.Events, *ev)
	}
	// The watchdog reads only what head repairs need; doctor's other inputs are not cached.
	s.Blind = append(s.Blind, state.Gap{Resource: "deployments", Reason: "not watched by the watchdog"},
		state.Gap{Resource: "jobs", Reason: "not watched by the watchdog"})
	return s, true
}
