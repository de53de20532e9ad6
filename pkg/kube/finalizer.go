package kube

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// RemoveRayClusterFinalizer removes finalizer from a RayCluster with one JSON patch whose test
// operations pin the uid, the resourceVersion and the finalizer at index: the API server applies
// the patch to the object as it is, so when anything changed since it was seen, a test fails and
// nothing is removed (someone else's change is never undone). dryRun asks for a server-side dry run.
//
// A failed test comes back as a Conflict, a RayCluster already gone as NotFound (both for the
// caller to report); every other error is explained in one line.
func (c *Clients) RemoveRayClusterFinalizer(ctx context.Context, namespace, name string, uid types.UID, resourceVersion string, index int, finalizer string, dryRun bool) error {
	path := fmt.Sprintf("/metadata/finalizers/%d", index)
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": string(uid)},
		{"op": "test", "path": "/metadata/resourceVersion", "value": resourceVersion},
		{"op": "test", "path": path, "value": finalizer},
		{"op": "remove", "path": path},
	})
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = c.Ray.RayV1().RayClusters(namespace).Patch(ctx, name, types.JSONPatchType, patch, opts)
	switch {
	case err == nil || apierrors.IsNotFound(err):
		return err
	case apierrors.IsInvalid(err) || apierrors.IsConflict(err):
		// The API server answers a failed JSON patch test with 422.
		return apierrors.NewConflict(schema.GroupResource{Group: "ray.io", Resource: "rayclusters"}, name,
			fmt.Errorf("changed since it was seen (uid %s, resourceVersion %s): %v", uid, resourceVersion, err))
	}
	return Explain(err, Request{Verb: "patch", Resource: "rayclusters.ray.io", Namespace: namespace, Name: name, Host: c.Host()})
}
