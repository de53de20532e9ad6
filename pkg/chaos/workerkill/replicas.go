package workerkill

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/rayapi"
)

// stoppingReplica is the one replica state that no longer serves: Serve is already replacing it.
const stoppingReplica = "STOPPING"

// placement is where Ray's view places Serve's replicas.
type placement struct {
	// byPod is, for each worker of the group, its replicas ("app/deployment#replica", by name).
	byPod map[string][]string
	// total is, per deployment ("app/deployment"), its replicas in the whole cluster.
	total map[string]int
}

// place is, for each pod of pods, the Serve replicas Ray's view places on it
// ("app/deployment#replica", by name), and each deployment's replicas in the whole cluster. A Ray node on KubeRay is a pod, and the node IP Ray picks
// is the address of the pod's one interface, the pod's IP (ray start takes the address that
// routes to the GCS; KubeRay passes none, and reaches the head's proxy at Status.PodIP itself), so
// a replica's node_ip names its pod. Replicas that are stopping, and replicas on no pod of pods
// (the head's, another group's), are left out.
func place(v rayapi.View, pods []corev1.Pod) placement {
	byIP := map[string]string{}
	for _, p := range pods {
		if p.Status.PodIP != "" {
			byIP[p.Status.PodIP] = p.Name
		}
	}
	out := placement{byPod: map[string][]string{}, total: map[string]int{}}
	for _, a := range v.Apps {
		for _, d := range a.Deployments {
			for _, r := range d.Replicas {
				if r.State == stoppingReplica {
					continue
				}
				out.total[a.Name+"/"+d.Name]++
				if pod, ok := byIP[r.NodeIP]; ok {
					out.byPod[pod] = append(out.byPod[pod], a.Name+"/"+d.Name+"#"+r.ID)
				}
			}
		}
	}
	for _, rs := range out.byPod {
		sort.Strings(rs)
	}
	return out
}

// readReplicas asks the head's dashboard (through a port-forward, as doctor --ray does) where
// Serve placed its replicas, and returns those on the workers. Nothing is killed when Ray cannot
// say: a kill of "the workers with replicas" must rest on Ray's own view.
func readReplicas(ctx context.Context, c Cluster, namespace, cluster string, workers []corev1.Pod) (*placement, error) {
	selector := ray.LabelCluster + "=" + cluster + "," + ray.LabelNodeType + "=" + ray.NodeTypeHead
	heads, err := c.ListPodsMatching(ctx, namespace, selector)
	if err != nil {
		return nil, err
	}
	head := servingHead(heads)
	if head == nil {
		return nil, fault.Errorf(fault.NotFound, "RayCluster %s/%s has no Running head to read Serve's replicas from (%s needs Ray's view): nothing was killed",
			namespace, cluster, SetServeReplicas)
	}
	v := c.ReadRayView(ctx, head, 0)
	switch {
	case v.Unreachable != nil:
		return nil, fault.Errorf(fault.API, "could not read Serve's replicas from the dashboard of head %s/%s (%s): %s; nothing was killed",
			namespace, head.Name, v.Unreachable.Reason, v.Unreachable.Detail)
	case !v.AppsRead:
		return nil, fault.Errorf(fault.API, "the dashboard of head %s/%s did not list Serve's applications (%s); nothing was killed",
			namespace, head.Name, strings.Join(v.Failed, "; "))
	}
	p := place(v, workers)
	return &p, nil
}

// servingHead is the head to read Ray's view through: Running, not being deleted, the newest
// when a replacement is coming up.
func servingHead(pods []corev1.Pod) *corev1.Pod {
	var head *corev1.Pod
	for i := range pods {
		p := &pods[i]
		if ray.Running(p) && (head == nil || head.CreationTimestamp.Before(&p.CreationTimestamp)) {
			head = p
		}
	}
	return head
}

// hosting is the workers of live that host at least one replica.
func (pl *placement) hosting(live []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range live {
		if len(pl.byPod[p.Name]) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// noReplicaError says that Ray's view places no replica on a live worker of the group.
func noReplicaError(namespace, cluster, group string, live int) error {
	return fault.Errorf(fault.NotFound, "Ray's view places no Serve replica on any of the %d live workers of group %s of RayCluster %s/%s: nothing was killed (%s)",
		live, group, namespace, cluster, fmt.Sprintf("see where they run: kubectl ray doctor --ray raycluster/%s -n %s", cluster, namespace))
}

// chosenReplicas is, with --serve-replicas, the replicas on each chosen worker by NAMESPACE/NAME;
// nil without.
func (t *target) chosenReplicas() map[string][]string {
	if t.replicas == nil {
		return nil
	}
	out := map[string][]string{}
	for _, p := range t.chosen {
		out[p.Namespace+"/"+p.Name] = t.replicas.byPod[p.Name]
	}
	return out
}

// wipedOut is, by name, the deployments whose every replica was on a chosen worker: Serve has
// none left to route to until it places new ones.
func (t *target) wipedOut() []string {
	if t.replicas == nil {
		return nil
	}
	lost := map[string]int{}
	for _, p := range t.chosen {
		for _, r := range t.replicas.byPod[p.Name] {
			lost[r[:strings.LastIndexByte(r, '#')]]++
		}
	}
	var out []string
	for d, n := range lost {
		if n == t.replicas.total[d] {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// amongHosts says, in the plan and the report, that the workers were picked among the hosts.
func amongHosts(serveReplicas bool) string {
	if !serveReplicas {
		return ""
	}
	return ", among those Ray's view says host Serve replicas"
}

// replicaList is a worker's replicas for the text outputs ("" for none).
func replicaList(rs []string) string {
	if len(rs) == 0 {
		return ""
	}
	return "  Serve replicas: " + strings.Join(rs, ", ")
}
