package upgrade

import (
	"context"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// target is what the run resolved before anything is changed.
type target struct {
	rs     *rayv1.RayService
	active string
	patch  []byte
	after  *rayv1.RayService // the server's dry run of the patch
	// The Service probed (the RayService's serve Service, or the Gateway's data plane's), in
	// serviceNS, its port and that port's name.
	serviceNS, service string
	port               int
	portName           string
	// gateway is where clients enter a RayService upgraded incrementally; nil otherwise.
	gateway *gatewayEntry
}

// resolve reads the RayService and its serve Service, builds the patch and has the API server
// dry-run it: a patch that would change nothing in the spec is refused here.
func resolve(ctx context.Context, c Cluster, s *Settings) (*target, error) {
	sv, err := experiment.ServingOf(ctx, c, s.Namespace, s.RayService)
	if err != nil {
		return nil, err
	}
	rs := sv.RayService
	t := &target{rs: rs, active: sv.Cluster, serviceNS: s.Namespace, service: sv.Service}
	switch {
	case s.GatewayService != "" && !ray.IncrementalUpgrade(rs):
		return nil, invalid("%s is for a RayService upgraded with NewClusterWithIncrementalUpgrade, and RayService %s/%s is not: drop it to probe %s",
			SetGatewayService, s.Namespace, s.RayService, sv.Service)
	case rs.Spec.UpgradeStrategy != nil && rs.Spec.UpgradeStrategy.Type != nil && *rs.Spec.UpgradeStrategy.Type == rayv1.RayServiceUpgradeNone:
		return nil, invalid("RayService %s/%s has spec.upgradeStrategy.type None: KubeRay would not start a new cluster for the change, so there is no upgrade to probe; nothing was changed",
			s.Namespace, s.RayService)
	case rs.Status.PendingServiceStatus.RayClusterName != "":
		return nil, invalid("RayService %s/%s is already upgrading to RayCluster %s: nothing was changed; wait until that upgrade ends (kubectl get rayservice -n %s %s)",
			s.Namespace, s.RayService, rs.Status.PendingServiceStatus.RayClusterName, s.Namespace, s.RayService)
	}
	if t.patch, err = s.patchOf(rs); err != nil {
		return nil, err
	}
	if t.after, err = c.PatchRayService(ctx, s.Namespace, s.RayService, t.patch, true); err != nil {
		return nil, err
	}
	if t.after.Generation == rs.Generation {
		return nil, invalid("the %s changes nothing in the spec of RayService %s/%s (generation stays %d): nothing would start a new cluster",
			s.what(), s.Namespace, s.RayService, rs.Generation)
	}
	if ray.IncrementalUpgrade(rs) {
		if t.gateway, err = resolveGateway(ctx, c, s, rs); err != nil {
			return nil, err
		}
		svc := t.gateway.Service
		t.serviceNS, t.service = svc.Namespace, svc.Name
		if t.port, t.portName, err = servicePort(svc, s.Port, GatewayListenerPort); err != nil {
			return nil, err
		}
		return t, nil
	}
	svc, err := c.GetService(ctx, s.Namespace, t.service)
	if err != nil {
		return nil, err
	}
	if t.port, t.portName, err = servicePort(svc, s.Port, experiment.DefaultServePort); err != nil {
		return nil, err
	}
	return t, nil
}

// strategy is the RayService's upgrade strategy as KubeRay names it.
func (t *target) strategy() string {
	if t.gateway != nil {
		return string(rayv1.RayServiceNewClusterWithIncrementalUpgrade)
	}
	return string(rayv1.RayServiceNewCluster)
}

func (t *target) gatewayName() string {
	if t.gateway == nil {
		return ""
	}
	return t.gateway.Gateway
}
