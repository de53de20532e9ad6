package kube

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// KillMode is how a pod is killed.
type KillMode string

const (
	// KillDelete deletes with the pod's own grace period, as `kubectl delete pod` does.
	KillDelete KillMode = "delete"
	// KillForce deletes with grace period 0: the API object goes at once (the kubelet still
	// stops the containers).
	KillForce KillMode = "force"
	// KillEvict asks the Eviction API, which respects PodDisruptionBudgets.
	KillEvict KillMode = "evict"
)

// KillModes lists the modes in the order the help shows them.
var KillModes = []KillMode{KillDelete, KillForce, KillEvict}

// Refused is a kill the API would not do for a reason other than RBAC: an eviction blocked by
// a PodDisruptionBudget (429 TooManyRequests). Nothing was killed.
type Refused struct {
	Pod     string
	Code    int32
	Message string
	// Budget is the PodDisruptionBudget that refused, from the API server's DisruptionBudget
	// cause ("The disruption budget NAME needs 1 healthy pods and has 1 currently"); "" when
	// the answer named none.
	Budget string
	// Cause is that cause's message as the API server wrote it.
	Cause string
}

func (r *Refused) Error() string {
	return fmt.Sprintf("the API refused to evict pod %s (%d): %s", r.Pod, r.Code, r.Message)
}

// KillPod kills pod by mode, only while it is the pod that was seen: uid and resourceVersion
// preconditions, so a replacement with the same name, or a pod that changed since it was read, is
// never touched (the API answers 409 and nothing is killed). Callers read the pod just before. dryRun asks the API server for a server-side
// dry run: RBAC, admission and PodDisruptionBudgets are checked and nothing is deleted.
//
// Errors: *Refused for a 429 from an eviction; NotFound passes through as the API's error (the
// pod is already gone); everything else is explained in one line naming the RBAC verb and
// resource (delete pods, or create pods/eviction).
func (c *Clients) KillPod(ctx context.Context, pod *corev1.Pod, mode KillMode, dryRun bool) error {
	uid, rv := pod.UID, pod.ResourceVersion
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	switch mode {
	case KillDelete, KillForce:
		if mode == KillForce {
			zero := int64(0)
			opts.GracePeriodSeconds = &zero
		}
		err := c.Kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, opts)
		if err == nil || apierrors.IsNotFound(err) {
			return err
		}
		return Explain(err, Request{Verb: "delete", Resource: "pods", Namespace: pod.Namespace, Name: pod.Name, Host: c.Host()})
	case KillEvict:
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}, DeleteOptions: &opts}
		err := c.Kube.PolicyV1().Evictions(pod.Namespace).Evict(ctx, ev)
		if err == nil || apierrors.IsNotFound(err) {
			return err
		}
		if apierrors.IsTooManyRequests(err) {
			var st apierrors.APIStatus
			msg := err.Error()
			code := int32(429)
			if s, ok := err.(apierrors.APIStatus); ok {
				st = s
				msg, code = st.Status().Message, st.Status().Code
			}
			return refusedEviction(pod.Name, err, code, msg)
		}
		return Explain(err, Request{Verb: "create", Resource: "pods/eviction", Namespace: pod.Namespace, Name: pod.Name, Host: c.Host()})
	}
	return fault.Errorf(fault.Invalid, "unknown kill mode %q: use delete, force or evict", mode)
}

// refusedEviction is a 429 from the Eviction API as a *Refused, naming the budget when the
// server's DisruptionBudget cause does (k8s.io/kubernetes pkg/registry/core/pod/storage/eviction.go
// writes "The disruption budget %s needs %d healthy pods and has %d currently").
func refusedEviction(pod string, err error, code int32, msg string) *Refused {
	r := &Refused{Pod: pod, Code: code, Message: msg}
	st, ok := err.(apierrors.APIStatus)
	if !ok || st.Status().Details == nil {
		return r
	}
	for _, c := range st.Status().Details.Causes {
		if c.Type != policyv1.DisruptionBudgetCause {
			continue
		}
		r.Cause = c.Message
		if rest, ok := strings.CutPrefix(c.Message, "The disruption budget "); ok {
			r.Budget, _, _ = strings.Cut(rest, " ")
		}
		break
	}
	return r
}
