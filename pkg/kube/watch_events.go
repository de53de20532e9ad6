package kube

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// byInvolvedCluster indexes Events by "namespace/cluster" of the RayCluster they are about.
const byInvolvedCluster = "involved"

// addEvents adds the cache of Events about RayClusters (one LIST then a WATCH, selected by
// involvedObject.kind=RayCluster), from which the watchdog sees a head recreate loop and backs
// off (kuberay #4272). Events are optional, as they are for doctor: when the first page is
// refused, the watchdog runs without them and head-recreate-loop does not run.
func (h *ClusterInformers) addEvents() error {
	if h.shape.EventSelector == "" {
		h.eventsBlind = "no Events asked for"
		return nil
	}
	evs := h.c.Kube.CoreV1().Events(h.namespace)
	// One page of one Event, once at start: the only way to learn whether Events may be listed
	// before an informer turns a refusal into a fatal error.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := evs.List(ctx, metav1.ListOptions{FieldSelector: h.shape.EventSelector, Limit: 1})
	if apierrors.IsForbidden(err) {
		h.eventsBlind = Explain(err, Request{Verb: "list", Resource: "events", Namespace: h.namespace, Host: h.c.Host()}).Error()
		return nil
	}
	h.events = newInformer(listWatch(evs.List, evs.Watch, Selected{Field: h.shape.EventSelector}), &corev1.Event{}, cache.Indexers{byInvolvedCluster: h.eventClusterIndex})
	return nil
}

// kept reports whether ev is about a RayCluster and kept by the shape.
func (h *ClusterInformers) kept(ev *corev1.Event) bool {
	return ev != nil && ev.InvolvedObject.Kind == "RayCluster" && (h.shape.KeepEvent == nil || h.shape.KeepEvent(ev))
}

func (h *ClusterInformers) eventClusterIndex(obj any) ([]string, error) {
	ev := asEvent(obj)
	if !h.kept(ev) {
		return nil, nil
	}
	return []string{ev.InvolvedObject.Namespace + "/" + ev.InvolvedObject.Name}, nil
}

// eventCluster re-examines the RayCluster a kept Event is about (a head lifecycle Event): each
// turn of a loop brings the watchdog back to it.
func (h *ClusterInformers) eventCluster(onChange func(types.NamespacedName)) func(any) {
	return func(obj any) {
		if ev := asEvent(obj); h.kept(ev) {
			onChange(types.NamespacedName{Namespace: ev.InvolvedObject.Namespace, Name: ev.InvolvedObject.Name})
		}
	}
}

// ClusterEvents are the cached Events about the RayCluster key names; without an Event cache,
// blind says why they are not read.
func (h *ClusterInformers) ClusterEvents(key types.NamespacedName) (events []*corev1.Event, blind string) {
	if h.events == nil {
		return nil, h.eventsBlind
	}
	objs, _ := h.events.GetIndexer().ByIndex(byInvolvedCluster, key.Namespace+"/"+key.Name)
	for _, o := range objs {
		if ev := asEvent(o); ev != nil {
			events = append(events, ev)
		}
	}
	return events, ""
}

func asEvent(obj any) *corev1.Event { return objectAs[corev1.Event](obj) }

// EventsBlind is why the Events about RayClusters are not read, "" when they are: the watchdog
// says it at start, since without them it cannot see a head recreate loop to back off from.
func (h *ClusterInformers) EventsBlind() string { return h.eventsBlind }
