package kube

import (
	"context"
	"errors"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/kubectl/pkg/drain"
)

// What chaos drain asks of the API: kubectl's own drain library (k8s.io/kubectl/pkg/drain) for
// cordoning and for the pods a drain takes (its filters skip DaemonSet and mirror pods and refuse
// what `kubectl drain` refuses), and the Eviction API with preconditions for each pod. The
// library's own EvictPod sends no uid or resourceVersion precondition and polls every pod with a
// GET each second; the run already watches the pods, and never touches a pod it did not read.

// DrainFilter is what `kubectl drain` lets a user say about the pods it takes.
type DrainFilter struct {
	PodSelector        string
	IgnoreDaemonSets   bool
	DeleteEmptyDirData bool
	Force              bool // pods that no controller manages
}

// DrainPods is what kubectl's drain library makes of a node's pods: those it would evict, its
// warning about those it skips (DaemonSet pods with IgnoreDaemonSets, pods whose deletion started
// long ago), in its own words, and its errors about those it refuses (a DaemonSet pod without
// IgnoreDaemonSets, local storage without DeleteEmptyDirData, an unmanaged pod without Force),
// which stop a drain as they stop kubectl's. Mirror pods are skipped silently, as kubectl does.
type DrainPods struct {
	Evict    []corev1.Pod
	Warnings string
	Refusals []string
}

// PodsToDrain lists the pods on node (one paged LIST across namespaces, field selector
// spec.nodeName, as kubectl drain does) and sorts them with kubectl's drain library. Its DaemonSet
// filter GETs each DaemonSet that owns a pod there, as kubectl does.
func (c *Clients) PodsToDrain(ctx context.Context, node string, f DrainFilter) (*DrainPods, error) {
	h := &drain.Helper{Ctx: ctx, Client: c.Kube, PodSelector: f.PodSelector, IgnoreAllDaemonSets: f.IgnoreDaemonSets,
		DeleteEmptyDirData: f.DeleteEmptyDirData, Force: f.Force, GracePeriodSeconds: -1, ChunkSize: 500,
		Out: io.Discard, ErrOut: io.Discard}
	list, errs := h.GetPodsForDeletion(node)
	if list == nil {
		return nil, Explain(errors.Join(errs...), Request{Verb: "list", Resource: "pods", Host: c.Host()})
	}
	out := &DrainPods{Evict: list.Pods(), Warnings: list.Warnings()}
	for _, err := range errs {
		// The library says "cannot delete" twice of a pod no controller manages (its message
		// begins with the words it is then prefixed with); kubectl drain prints it so.
		out.Refusals = append(out.Refusals, strings.Replace(err.Error(), "cannot delete cannot delete ", "cannot delete ", 1))
	}
	return out, nil
}

// CordonNode marks node unschedulable (cordon true) or schedulable again, through kubectl's
// CordonHelper (a strategic merge patch of spec.unschedulable). changed is false when the node
// already was as asked: a node that was cordoned before the run is left cordoned by it.
func (c *Clients) CordonNode(ctx context.Context, name string, cordon, dryRun bool) (node *corev1.Node, changed bool, err error) {
	n, err := getExplained(ctx, c, "nodes", "", name, c.Kube.CoreV1().Nodes().Get)
	if err != nil {
		return nil, false, err
	}
	h := drain.NewCordonHelper(n)
	if !h.UpdateIfRequired(cordon) {
		return n, false, nil
	}
	if err, patchErr := h.PatchOrReplaceWithContext(ctx, c.Kube, dryRun); err != nil || patchErr != nil {
		if err == nil {
			err = patchErr
		}
		return n, false, Explain(err, Request{Verb: "patch", Resource: "nodes", Name: name, Host: c.Host()})
	}
	return n, true, nil
}

// GetNode reads the node called name.
func (c *Clients) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	return getExplained(ctx, c, "nodes", "", name, c.Kube.CoreV1().Nodes().Get)
}

// DrainPod evicts pod (or, with evict false, deletes it, as `kubectl drain --disable-eviction`
// does) while it is the pod that was seen: uid and resourceVersion preconditions. grace < 0 keeps
// the pod's own terminationGracePeriodSeconds. Errors: *Refused for a 429 (a PodDisruptionBudget;
// the budget named when the server says); NotFound as the API's (already gone); a 409 as the API's
// (the pod changed: read it again); the rest explained in one line.
func (c *Clients) DrainPod(ctx context.Context, pod *corev1.Pod, evict bool, grace int64, dryRun bool) error {
	uid, rv := pod.UID, pod.ResourceVersion
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}
	if grace >= 0 {
		opts.GracePeriodSeconds = &grace
	}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if !evict {
		err := c.Kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, opts)
		if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return err
		}
		return Explain(err, Request{Verb: "delete", Resource: "pods", Namespace: pod.Namespace, Name: pod.Name, Host: c.Host()})
	}
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}, DeleteOptions: &opts}
	err := c.evict(ctx, ev)
	switch {
	case err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return err
	case apierrors.IsTooManyRequests(err):
		msg, code := err.Error(), int32(429)
		if s, ok := err.(apierrors.APIStatus); ok {
			msg, code = s.Status().Message, s.Status().Code
		}
		return refusedEviction(pod.Name, err, code, msg)
	}
	return Explain(err, Request{Verb: "create", Resource: "pods/eviction", Namespace: pod.Namespace, Name: pod.Name, Host: c.Host()})
}

// evict posts an eviction once. client-go retries a 429 that carries Retry-After by itself, up to
// ten times: the Eviction API sends one (10 s) for a budget it says is "still being processed",
// which a budget the disruption controller cannot compute stays for good, so one eviction, a dry
// run's included, would wait over a minute and a half. The drain asks again on its own schedule,
// within its --timeout, and a dry run answers at once.
func (c *Clients) evict(ctx context.Context, ev *policyv1.Eviction) error {
	if rc, ok := c.Kube.PolicyV1().RESTClient().(*rest.RESTClient); ok && rc != nil {
		return rc.Post().AbsPath("/api/v1").Namespace(ev.Namespace).Resource("pods").Name(ev.Name).SubResource("eviction").
			Body(ev).MaxRetries(0).Do(ctx).Error()
	}
	return c.Kube.PolicyV1().Evictions(ev.Namespace).Evict(ctx, ev) // client-go's fakes
}
