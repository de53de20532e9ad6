package kube

import (
	"context"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// PatchRayService applies a JSON merge patch to a RayService (chaos upgrade); dryRun has the API
// server run admission and validation without storing anything. Errors are one explained line;
// a patch the API server finds invalid is fault.Invalid (bad input).
func (c *Clients) PatchRayService(ctx context.Context, namespace, name string, patch []byte, dryRun bool) (*rayv1.RayService, error) {
	opts := metav1.PatchOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	rs, err := c.Ray.RayV1().RayServices(namespace).Patch(ctx, name, types.MergePatchType, patch, opts)
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsUnsupportedMediaType(err) {
		// The patch itself is wrong (CRD validation, malformed JSON): bad input, not an API failure.
		return nil, fault.Errorf(fault.Invalid, "the API server refused the patch of RayService %s/%s: %s; nothing was changed", namespace, name, oneLine(err))
	}
	if apierrors.IsConflict(err) {
		// The patch carries a resourceVersion precondition (ImagePatch, PinnedPatch).
		return nil, fault.Errorf(fault.API, "RayService %s/%s changed since it was read: nothing was patched; run the command again", namespace, name)
	}
	if err != nil {
		return nil, Explain(err, Request{Verb: "patch", Resource: "rayservices.ray.io", Namespace: namespace, Name: name, Host: c.Host()})
	}
	return rs, nil
}
