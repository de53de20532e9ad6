package experiment

import (
	"context"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// RayServices reads a RayService (pkg/kube's Clients, or a fake).
type RayServices interface {
	GetRayService(ctx context.Context, namespace, name string) (*rayv1.RayService, error)
}

// Serving is what a RayService serves with now: its active RayCluster, and its serve Service,
// which every experiment on a RayService probes by default.
type Serving struct {
	RayService *rayv1.RayService
	Cluster    string
	Service    string
}

// ServingOf reads RayService namespace/name once. A RayService with no active RayCluster yet
// (still deploying) is not found: there is nothing to disrupt, nor to probe.
func ServingOf(ctx context.Context, c RayServices, namespace, name string) (*Serving, error) {
	rs, err := c.GetRayService(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	sv := &Serving{RayService: rs, Cluster: rs.Status.ActiveServiceStatus.RayClusterName, Service: ray.ServeServiceName(name)}
	if sv.Cluster == "" {
		return nil, fault.Errorf(fault.NotFound, "RayService %s/%s has no active RayCluster yet (status.activeServiceStatus.rayClusterName is empty): wait until it serves", namespace, name)
	}
	return sv, nil
}
