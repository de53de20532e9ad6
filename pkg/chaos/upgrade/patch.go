package upgrade

import (
	"context"
	"encoding/json"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// rayContainer is the index of the Ray container in a group's pod template: KubeRay runs Ray in
// the first container (utils.RayContainerIndex), whatever its name.
const rayContainer = 0

// ImagePatch is the JSON merge patch that sets image on the Ray container of the head and of every
// worker group of rs. A merge patch replaces lists whole, so it carries the head's containers and
// every worker group as they are in rs, with the image changed; metadata.resourceVersion makes
// the API server refuse it if rs changed since it was read.
func ImagePatch(rs *rayv1.RayService, image string) ([]byte, error) {
	spec := rs.Spec.RayClusterSpec
	if len(spec.HeadGroupSpec.Template.Spec.Containers) == 0 {
		return nil, fault.Errorf(fault.Invalid, "RayService %s/%s has no head container to set %s on", rs.Namespace, rs.Name, SetImage)
	}
	changed := false
	set := func(cs []corev1.Container) []corev1.Container {
		out := append([]corev1.Container(nil), cs...)
		if len(out) > rayContainer && out[rayContainer].Image != image {
			out[rayContainer].Image = image
			changed = true
		}
		return out
	}
	head := set(spec.HeadGroupSpec.Template.Spec.Containers)
	workers := make([]rayv1.WorkerGroupSpec, len(spec.WorkerGroupSpecs))
	for i, g := range spec.WorkerGroupSpecs {
		g.Template.Spec.Containers = set(g.Template.Spec.Containers)
		workers[i] = g
	}
	if !changed {
		return nil, fault.Errorf(fault.Invalid, "RayService %s/%s already runs %s %s in every Ray container: nothing would start a new cluster; give another %s, or %s",
			rs.Namespace, rs.Name, SetImage, image, SetImage, SetPatch)
	}
	cfg := map[string]any{"headGroupSpec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": head}}}}
	if len(workers) > 0 {
		cfg["workerGroupSpecs"] = workers
	}
	p := map[string]any{
		"metadata": map[string]any{"resourceVersion": rs.ResourceVersion},
		"spec":     map[string]any{"rayClusterConfig": cfg},
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the image patch: %w", err)
	}
	return b, nil
}

// PinnedPatch is the user's JSON merge patch with metadata.resourceVersion set to rs's, so the API
// server applies it only to the RayService as it was read, as ImagePatch does. A resourceVersion
// the patch already carries is kept: the user pinned a version of their own.
func PinnedPatch(patch []byte, rs *rayv1.RayService) ([]byte, error) {
	var p map[string]any
	if err := json.Unmarshal(patch, &p); err != nil || p == nil {
		return nil, fault.Errorf(fault.Invalid, "%s is not a JSON object: give a JSON merge patch such as '{\"spec\":{...}}'", SetPatch)
	}
	meta, ok := p["metadata"].(map[string]any)
	if !ok {
		if p["metadata"] != nil {
			return nil, fault.Errorf(fault.Invalid, "%s has a metadata that is not a JSON object", SetPatch)
		}
		meta = map[string]any{}
		p["metadata"] = meta
	}
	if _, set := meta["resourceVersion"]; !set {
		meta["resourceVersion"] = rs.ResourceVersion
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the patch: %w", err)
	}
	return b, nil
}

// patchOf is the user's patch, or the image patch built from rs.
func (s *Settings) patchOf(rs *rayv1.RayService) ([]byte, error) {
	if s.Patch != "" {
		return []byte(s.Patch), nil
	}
	return ImagePatch(rs, s.Image)
}

// apply patches the RayService for real, as it is after the warm-up: it is read again, refused
// when its spec changed or an upgrade started since resolve, and the patch carries the fresh
// read's resourceVersion (an image patch is built again from it; a --patch is pinned to it), so
// the API server applies it only to the version just checked. The fresh read is needed because
// KubeRay writes the status, and so the resourceVersion, often.
func (s *Settings) apply(ctx context.Context, c Cluster, t *target) error {
	rs, err := c.GetRayService(ctx, s.Namespace, s.RayService)
	if err != nil {
		return err
	}
	switch {
	case rs.Generation != t.rs.Generation:
		return fault.Errorf(fault.API, "RayService %s/%s changed since it was read (generation %d, now %d): nothing was patched; run the command again",
			s.Namespace, s.RayService, t.rs.Generation, rs.Generation)
	case rs.Status.PendingServiceStatus.RayClusterName != "":
		return fault.Errorf(fault.API, "RayService %s/%s started upgrading to RayCluster %s during the warm-up: nothing was patched",
			s.Namespace, s.RayService, rs.Status.PendingServiceStatus.RayClusterName)
	}
	var patch []byte
	if s.Image != "" {
		patch, err = ImagePatch(rs, s.Image)
	} else {
		patch, err = PinnedPatch(t.patch, rs)
	}
	if err != nil {
		return err
	}
	_, err = c.PatchRayService(ctx, s.Namespace, s.RayService, patch, false)
	return err
}
