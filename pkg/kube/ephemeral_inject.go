package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// InjectEphemeralContainer adds ec to pod with EphemeralContainerPatch (the pod's uid and
// resourceVersion as preconditions), as the pressure runner asks. dryRun has the API server judge
// it and store nothing.
func (c *Clients) InjectEphemeralContainer(ctx context.Context, pod *corev1.Pod, ec corev1.EphemeralContainer, dryRun bool) (*corev1.Pod, error) {
	patch, err := EphemeralContainerPatch(pod, ec)
	if err != nil {
		return nil, fault.Errorf(fault.API, "cannot build the patch for pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	return c.AddEphemeralContainer(ctx, pod, patch, dryRun)
}
