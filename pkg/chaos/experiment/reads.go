package experiment

import (
	"context"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Reads is what resolving a target under the probe reads (pkg/kube's Clients, or a fake): the
// RayCluster or RayService, their pods, and the probed Service with its ready endpoints. Errors
// come back explained, one line each.
type Reads interface {
	RayServices
	ServiceGetter
	GetRayCluster(ctx context.Context, namespace, name string) (*rayv1.RayCluster, error)
	GetPodByName(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	ListPodsMatching(ctx context.Context, namespace, selector string) ([]corev1.Pod, error)
	ListReadyEndpoints(ctx context.Context, namespace, service, portName string) ([]kube.ReadyEndpoint, error)
}

// LivePods are the pods matching selector that are neither being deleted nor terminal (ray.Live), by
// one LIST: those an experiment may take away.
func LivePods(ctx context.Context, c Reads, namespace, selector string) ([]corev1.Pod, error) {
	pods, err := c.ListPodsMatching(ctx, namespace, selector)
	if err != nil {
		return nil, err
	}
	var live []corev1.Pod
	for _, p := range pods {
		if ray.Live(&p) {
			live = append(live, p)
		}
	}
	return live, nil
}

// PlanEndpoints are the probed Service's ready endpoints (POD:PORT) as a dry run plans them, read
// once; none for a URL (service ""), and none ready is the caller's to judge.
func PlanEndpoints(ctx context.Context, c Reads, namespace, service, portName string) ([]string, error) {
	out := []string{}
	if service == "" {
		return out, nil
	}
	ready, err := c.ListReadyEndpoints(ctx, namespace, service, portName)
	if err != nil {
		return nil, err
	}
	for _, e := range ready {
		out = append(out, fmt.Sprintf("%s:%d", e.Pod, e.Port))
	}
	return out, nil
}
