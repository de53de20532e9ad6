package load

import (
	"context"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Admission sets s.Admission and s.Nodes from the cluster the documents of s would be applied
// to (doctor -f against a cluster): the ResourceQuotas, LimitRanges and Ray objects (the documents may
// name existing ones) of each namespace the documents' RayClusters go to, one LIST per kind and
// namespace, and every node, trimmed to what placement reads (state.TrimNodeForFit). A read
// refused (a namespaced user may not list nodes) is a gap the report names, and the rule that
// needs it stays silent.
func Admission(ctx context.Context, c *kube.Clients, s *state.Snapshot) {
	a := &state.Admission{}
	gaps := map[string]string{}
	seen := map[string]bool{}
	for _, rc := range s.Clusters {
		ns := rc.Namespace
		if seen[ns] {
			continue
		}
		seen[ns] = true
		if q, err := c.ListResourceQuotas(ctx, ns); err != nil {
			gaps["resourcequotas"] = exit.Message(err)
		} else {
			a.Quotas = append(a.Quotas, q...)
		}
		if l, err := c.ListLimitRanges(ctx, ns); err != nil {
			gaps["limitranges"] = exit.Message(err)
		} else {
			a.LimitRanges = append(a.LimitRanges, l...)
		}
		if e, err := rayObjectsIn(ctx, c, ns); err != nil {
			gaps[state.RayObjectsGap] = exit.Message(err)
		} else {
			a.Existing = append(a.Existing, e...)
		}
	}
	if n, err := c.ListNodes(ctx, state.TrimNodeForFit); err != nil {
		gaps["nodes"] = exit.Message(kube.Explain(err, kube.Request{Verb: "list", Resource: "nodes", Host: c.Host()}))
	} else {
		s.Nodes = n
	}
	for _, res := range []string{"resourcequotas", "limitranges", "nodes", state.RayObjectsGap} {
		if why, ok := gaps[res]; ok {
			s.Blind = append(s.Blind, state.Gap{Resource: res, Reason: why})
		}
	}
	s.Admission = a
}

// Operators reads the Deployments the operator is found among (ray.FindOperators), into a
// snapshot of their own, for the operator rules' findings about documents: which KubeRay would
// run them. A refusal is a gap of that snapshot.
func Operators(ctx context.Context, c *kube.Clients, now time.Time) *state.Snapshot {
	ops := &state.Snapshot{Now: now}
	if d, err := c.ListDeployments(ctx, ""); err != nil {
		ops.Blind = append(ops.Blind, state.Gap{Resource: "deployments", Reason: exit.Message(err)})
	} else {
		ops.Deployments = d
	}
	return ops
}

// rayObjectsIn lists the RayClusters, RayServices and RayJobs of namespace, one paged LIST per
// kind, kept to what doctor -f asks of an object its documents would change: that it exists, and
// a RayService's active cluster. The first refused read ends it.
func rayObjectsIn(ctx context.Context, c *kube.Clients, namespace string) ([]state.Existing, error) {
	explained := func(err error, resource string) error {
		return kube.Explain(err, kube.Request{Verb: "list", Resource: resource, Namespace: namespace, Host: c.Host()})
	}
	clusters, err := c.ListRayClusters(ctx, namespace, "", nil)
	if err != nil {
		return nil, explained(err, "rayclusters.ray.io")
	}
	services, err := c.ListRayServices(ctx, namespace, nil)
	if err != nil {
		return nil, explained(err, "rayservices.ray.io")
	}
	jobs, _, err := c.ListRayJobs(ctx, namespace, nil)
	if err != nil {
		return nil, explained(err, "rayjobs.ray.io")
	}
	var out []state.Existing
	byName := make(map[string]*rayv1.RayCluster, len(clusters))
	for i, rc := range clusters {
		byName[rc.Name] = &clusters[i]
		out = append(out, state.Existing{Kind: "RayCluster", Namespace: namespace, Name: rc.Name})
	}
	for _, rs := range services {
		e := state.Existing{Kind: "RayService", Namespace: namespace, Name: rs.Name, ActiveCluster: rs.Status.ActiveServiceStatus.RayClusterName}
		// KubeRay compares the spec with the pending cluster while an upgrade is under way, else
		// with the active one: read from the same LIST, no request more.
		if rc := byName[rs.Status.PendingServiceStatus.RayClusterName]; rc != nil {
			e.Compared = ray.ComparedClusterOf(rc, true)
		} else if rc := byName[rs.Status.ActiveServiceStatus.RayClusterName]; rc != nil {
			e.Compared = ray.ComparedClusterOf(rc, false)
		}
		out = append(out, e)
	}
	for _, rj := range jobs {
		out = append(out, state.Existing{Kind: "RayJob", Namespace: namespace, Name: rj.Name})
	}
	return out, nil
}
