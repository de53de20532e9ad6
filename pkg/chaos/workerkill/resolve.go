package workerkill

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/rayapi"
)

// Cluster is every API operation a worker kill makes (pkg/kube's Clients, or a fake).
type Cluster interface {
	experiment.Reads
	// KillPod kills pod while it is the version read (uid and resourceVersion preconditions);
	// *kube.Refused when a PodDisruptionBudget blocks an eviction.
	KillPod(ctx context.Context, pod *corev1.Pod, mode kube.KillMode, dryRun bool) error
	// ReadRayView reads the dashboard of head through a port-forward (--serve-replicas).
	ReadRayView(ctx context.Context, head *corev1.Pod, timeout time.Duration) rayapi.View
	experiment.Cluster
}

// target is what the run resolved before anything is changed.
type target struct {
	cluster string
	group   string
	live    int          // the group's live workers
	chosen  []corev1.Pod // those to kill, by name
	// replicas are, with --serve-replicas, where Ray placed Serve's replicas.
	replicas *placement
	service  string
	portName string
}

// resolve finds the cluster, its group's live workers (one LIST) and picks Count (or Percent) of
// them with Seed, among those hosting Serve replicas with ServeReplicas (one more LIST, for the
// head, and a read of its dashboard); nothing is changed.
func resolve(ctx context.Context, c Cluster, s *Settings) (*target, error) {
	t := &target{cluster: s.Cluster}
	if s.RayService != "" {
		var err error
		if t.cluster, err = s.ServeOf(ctx, c, s.Namespace, s.RayService); err != nil {
			return nil, err
		}
	}
	rc, err := c.GetRayCluster(ctx, s.Namespace, t.cluster)
	if err != nil {
		return nil, err
	}
	if t.group, err = pickGroup(rc, s.Group); err != nil {
		return nil, err
	}
	selector := ray.LabelCluster + "=" + t.cluster + "," + ray.LabelNodeType + "=" + ray.NodeTypeWorker + "," + ray.LabelGroup + "=" + t.group
	live, err := experiment.LivePods(ctx, c, s.Namespace, selector)
	if err != nil {
		return nil, err
	}
	t.live = len(live)
	if len(live) == 0 {
		return nil, fault.Errorf(fault.NotFound, "worker group %s of RayCluster %s/%s has no live worker to kill; list its pods with: kubectl get pods -n %s -l %s",
			t.group, s.Namespace, t.cluster, s.Namespace, selector)
	}
	candidates, among := live, "live workers"
	if s.ServeReplicas {
		if t.replicas, err = readReplicas(ctx, c, s.Namespace, t.cluster, live); err != nil {
			return nil, err
		}
		if candidates, among = t.replicas.hosting(live), "live workers hosting Serve replicas"; len(candidates) == 0 {
			return nil, noReplicaError(s.Namespace, t.cluster, t.group, len(live))
		}
	}
	n := s.Count
	switch {
	case s.Percent > 0:
		n = max(1, int(math.Ceil(float64(len(candidates))*s.Percent/100)))
	case n == 0: // --serve-replicas alone: every worker that hosts one
		n = len(candidates)
	}
	if n > len(candidates) {
		return nil, invalid("%s %d is more than the %d %s of group %s: nothing was killed", SetCount, n, len(candidates), among, t.group)
	}
	t.chosen = choose(candidates, n, s.Seed)
	if t.service, t.portName, err = s.ProbedService(ctx, c, s.Namespace); err != nil {
		return nil, err
	}
	return t, nil
}

// pickGroup is group, checked against the cluster's worker groups, or its only group.
func pickGroup(rc *rayv1.RayCluster, group string) (string, error) {
	var names []string
	for _, g := range rc.Spec.WorkerGroupSpecs {
		names = append(names, g.GroupName)
		if g.GroupName == group {
			return group, nil
		}
	}
	switch {
	case len(names) == 0:
		return "", fault.Errorf(fault.NotFound, "RayCluster %s/%s has no worker group: nothing to kill", rc.Namespace, rc.Name)
	case group == "" && len(names) == 1:
		return names[0], nil
	case group == "":
		return "", invalid("RayCluster %s/%s has %d worker groups (%s): pick one with %s", rc.Namespace, rc.Name, len(names), strings.Join(names, ", "), SetGroup)
	}
	return "", fault.Errorf(fault.NotFound, "RayCluster %s/%s has no worker group %q (its groups: %s)", rc.Namespace, rc.Name, group, strings.Join(names, ", "))
}

// choose is n of pods, picked by seed: the same seed over the same pods picks the same ones. The
// pods are sorted by name first, so the LIST's order does not matter; the result is by name.
func choose(pods []corev1.Pod, n int, seed int64) []corev1.Pod {
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	r := rand.New(rand.NewPCG(uint64(seed), 0x6b756265726179)) // "kuberay"
	r.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
	out := append([]corev1.Pod(nil), pods[:n]...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
