package kube

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// Tunnel is an open port-forward as the head-kill probe uses it.
type Tunnel interface {
	Addr() string
	Done() <-chan struct{}
	Close()
}

// OpenTunnel is PortForward behind the Tunnel interface.
func (c *Clients) OpenTunnel(ctx context.Context, namespace, pod string, port int) (Tunnel, error) {
	if c.Tunnels != nil {
		return c.Tunnels(ctx, namespace, pod, port)
	}
	if c.Config == nil {
		return nil, fault.Errorf(fault.API, "cannot port-forward to pod %s/%s: no connection to the API server", namespace, pod)
	}
	f, err := c.PortForward(ctx, namespace, pod, port)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// KillHeadPod is KillPod for a head kill: every error is one explained line ending in "nothing
// was killed", except *Refused (an eviction a PodDisruptionBudget blocks), which the caller
// explains with its own advice.
func (c *Clients) KillHeadPod(ctx context.Context, pod *corev1.Pod, mode KillMode, dryRun bool) error {
	err := c.KillPod(ctx, pod, mode, dryRun)
	var refused *Refused
	if err == nil || errors.As(err, &refused) || fault.KindOf(err) != 0 {
		return err
	}
	return fault.Errorf(fault.API, "cannot %s head pod %s/%s: %v; nothing was killed", mode, pod.Namespace, pod.Name, err)
}
