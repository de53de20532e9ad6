package kube

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DeletePod deletes a pod only while it is the object that was seen: the API server checks uid
// and resourceVersion (metav1.Preconditions) atomically with the delete, so a pod replaced or
// changed in between is never touched. grace is nil (the pod's own grace period) or 0 (force).
// dryRun asks for a server-side dry run: admission and RBAC run, nothing is deleted.
//
// Conflict (changed since seen) and NotFound (already gone) come back as the API's errors, for
// the caller to re-read and re-plan; every other error is explained in one line.
func (c *Clients) DeletePod(ctx context.Context, namespace, name string, uid types.UID, resourceVersion string, grace *int64, dryRun bool) error {
	opts := metav1.DeleteOptions{
		Preconditions:      &metav1.Preconditions{UID: &uid, ResourceVersion: &resourceVersion},
		GracePeriodSeconds: grace,
	}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	err := c.Kube.CoreV1().Pods(namespace).Delete(ctx, name, opts)
	if err == nil || apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return err
	}
	return Explain(err, Request{Verb: "delete", Resource: "pods", Namespace: namespace, Name: name, Host: c.Host()})
}
