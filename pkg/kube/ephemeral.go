package kube

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// EphemeralContainerPatch is the strategic merge patch that adds ec to pod, computed the way
// kubectl debug does: the two-way diff between the pod and the pod with ec appended. It also
// carries the pod's uid and resourceVersion as read, so the API server refuses it (409) if the
// pod changed or was replaced under the same name since: the checks the command made (a Ray
// pod, Running, ours) were made on that version only.
func EphemeralContainerPatch(pod *corev1.Pod, ec corev1.EphemeralContainer) ([]byte, error) {
	before, err := json.Marshal(pod)
	if err != nil {
		return nil, err
	}
	with := pod.DeepCopy()
	with.Spec.EphemeralContainers = append(with.Spec.EphemeralContainers, ec)
	after, err := json.Marshal(with)
	if err != nil {
		return nil, err
	}
	raw, err := strategicpatch.CreateTwoWayMergePatch(before, after, pod)
	if err != nil {
		return nil, err
	}
	var patch map[string]any
	if err := json.Unmarshal(raw, &patch); err != nil {
		return nil, err
	}
	meta := map[string]any{}
	if pod.UID != "" {
		meta["uid"] = string(pod.UID)
	}
	if pod.ResourceVersion != "" {
		meta["resourceVersion"] = pod.ResourceVersion
	}
	if len(meta) > 0 {
		patch["metadata"] = meta
	}
	return json.Marshal(patch)
}

// AddEphemeralContainer PATCHes pods/ephemeralcontainers of pod with patch. dryRun asks the server
// to validate and admit the change without storing it.
func (c *Clients) AddEphemeralContainer(ctx context.Context, pod *corev1.Pod, patch []byte, dryRun bool) (*corev1.Pod, error) {
	opts := metav1.PatchOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	out, err := c.Kube.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, opts, "ephemeralcontainers")
	if err == nil {
		return out, nil
	}
	req := Request{Verb: "patch", Resource: "pods/ephemeralcontainers", Namespace: pod.Namespace, Name: pod.Name, Host: c.Host()}
	var status apierrors.APIStatus
	if se, ok := err.(apierrors.APIStatus); ok {
		status = se
	}
	switch {
	// A 404 that names no object is the subresource itself missing (kubectl debug tells them apart
	// the same way); a 404 naming the pod means the pod went away.
	case apierrors.IsNotFound(err) && status != nil && (status.Status().Details == nil || status.Status().Details.Name == ""):
		return nil, fault.Errorf(fault.API, "ephemeral containers are not supported by this cluster (no pods/ephemeralcontainers subresource; Kubernetes 1.25+ serves it): nothing was injected")
	// A changed pod fails the resourceVersion (409); a pod replaced under the same name fails the
	// uid, which the API server reports as an immutable field (422).
	case apierrors.IsConflict(err) || uidRefused(err):
		return nil, fault.Errorf(fault.API, "pod %s/%s changed since it was read (it may have been replaced under the same name): nothing was injected; run the command again to target the pod as it is now",
			pod.Namespace, pod.Name)
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "PodSecurity"):
		return nil, fault.Errorf(fault.Forbidden, "pod security admission in namespace %q refused the ephemeral container: %s; nothing was injected",
			pod.Namespace, oneLine(err))
	}
	return nil, Explain(err, req)
}

// uidRefused reports whether err is the API server refusing a patch whose metadata.uid is not the
// pod's own.
func uidRefused(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	var se apierrors.APIStatus
	if !errors.As(err, &se) || se.Status().Details == nil {
		return false
	}
	for _, c := range se.Status().Details.Causes {
		if c.Field == "metadata.uid" {
			return true
		}
	}
	return false
}
