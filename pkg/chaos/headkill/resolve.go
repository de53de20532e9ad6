package headkill

import (
	"context"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// target is what the run resolved before anything is changed.
type target struct {
	cluster  string // the RayCluster whose head is killed
	head     *corev1.Pod
	service  string // probed Service, "" for a URL
	portName string
}

// resolve finds the cluster, its live head and the probe's Service with ONE read of each. The
// Service's ready endpoints are not read here: a run reads them with its watch (one LIST, then
// changes) and refuses there if none is ready, before any request or kill; a dry run reads them
// once (readyEndpoints).
func resolve(ctx context.Context, c Cluster, s *Settings) (*target, error) {
	t := &target{cluster: s.Cluster}
	var err error
	if s.RayService != "" {
		t.cluster, err = s.ServeOf(ctx, c, s.Namespace, s.RayService)
	} else {
		_, err = c.GetRayCluster(ctx, s.Namespace, s.Cluster)
	}
	if err != nil {
		return nil, err
	}
	selector := ray.HeadSelector(t.cluster)
	live, err := experiment.LivePods(ctx, c, s.Namespace, selector)
	if err != nil {
		return nil, err
	}
	if len(live) == 0 {
		return nil, fault.Errorf(fault.NotFound, "RayCluster %s/%s has no live head pod to kill; list its pods with: kubectl get pods -n %s -l %s",
			s.Namespace, t.cluster, s.Namespace, selector)
	}
	sort.Slice(live, func(i, j int) bool { return live[i].Name < live[j].Name })
	t.head = &live[0]
	if t.service, t.portName, err = s.ProbedService(ctx, c, s.Namespace); err != nil {
		return nil, err
	}
	return t, nil
}
