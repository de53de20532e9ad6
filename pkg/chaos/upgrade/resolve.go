package upgrade

import (
	"context"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
)

// target is what the run resolved before anything is changed.
type target struct {
	rs       *rayv1.RayService
	active   string
	patch    []byte
	after    *rayv1.RayService // the server's dry run of the patch
	service  string
	portName string
}

// resolve reads the RayService and its serve Service, builds the patch and has the API server
// dry-run it: a patch that would change nothing in the spec is refused here.
func resolve(ctx context.Context, c Cluster, s *Settings) (*target, error) {
	sv, err := experiment.ServingOf(ctx, c, s.Namespace, s.RayService)
	if err != nil {
		return nil, err
	}
	rs := sv.RayService
	t := &target{rs: rs, active: sv.Cluster, service: sv.Service}
	switch {
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
	svc, err := c.GetService(ctx, s.Namespace, t.service)
	if err != nil {
		return nil, err
	}
	for _, p := range svc.Spec.Ports {
		if int(p.Port) == s.Port && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) {
			return t.withPort(p.Name), nil
		}
	}
	return nil, invalid("Service %s/%s has no TCP port %d: pass %s", s.Namespace, t.service, s.Port, experiment.SetPort)
}

func (t *target) withPort(name string) *target { t.portName = name; return t }
