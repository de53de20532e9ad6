package headkill

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// target is what the run resolved before anything is changed.
type target struct {
	cluster  string // the RayCluster whose head is killed
	head     *corev1.Pod
	service  string // probed Service, "" for a URL
	port     int    // Service port
	portName string
}

// resolve finds the cluster, its live head and the probe's Service with ONE read of each. The
// Service's ready endpoints are not read here: a run reads them with its watch (one LIST, then
// changes) and refuses there if none is ready, before any request or kill; a dry run reads them
// once (readyEndpoints).
func resolve(ctx context.Context, c Cluster, s *Settings) (*target, error) {
	t := &target{cluster: s.Cluster}
	if s.RayService != "" {
		rs, err := c.GetRayService(ctx, s.Namespace, s.RayService)
		if err != nil {
			return nil, err
		}
		t.cluster = rs.Status.ActiveServiceStatus.RayClusterName
		if t.cluster == "" {
			return nil, chaos.Errorf(chaos.NotFound, "RayService %s/%s has no active RayCluster yet (status.activeServiceStatus.rayClusterName is empty): wait until it serves", s.Namespace, s.RayService)
		}
		if s.Service == "" {
			s.Service = diagnose.ServeServiceName(s.RayService)
		}
		if !s.PortSet && s.Target == "" {
			s.Port = experiment.DefaultServePort
		}
	} else if _, err := c.GetRayCluster(ctx, s.Namespace, s.Cluster); err != nil {
		return nil, err
	}
	selector := ray.HeadSelector(t.cluster)
	pods, err := c.ListPodsMatching(ctx, s.Namespace, selector)
	if err != nil {
		return nil, err
	}
	var live []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && !ray.Terminal(&p) {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return nil, chaos.Errorf(chaos.NotFound, "RayCluster %s/%s has no live head pod to kill; list its pods with: kubectl get pods -n %s -l %s",
			s.Namespace, t.cluster, s.Namespace, selector)
	}
	sort.Slice(live, func(i, j int) bool { return live[i].Name < live[j].Name })
	t.head = &live[0]
	if s.Target != "" {
		return t, nil
	}
	svc, err := c.GetService(ctx, s.Namespace, s.Service)
	if err != nil {
		return nil, err
	}
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, fmt.Sprint(p.Port))
		if int(p.Port) == s.Port && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) {
			t.portName = p.Name
			t.port = s.Port
		}
	}
	if t.port == 0 {
		return nil, invalid("Service %s/%s has no TCP port %d (its ports: %s): pass %s", s.Namespace, s.Service, s.Port, strings.Join(ports, ", "), experiment.SetPort)
	}
	t.service = s.Service
	return t, nil
}
