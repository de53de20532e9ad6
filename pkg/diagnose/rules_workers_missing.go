package diagnose

import (
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleWorkersMissing: a worker group has fewer pods than it wants because the API server refuses
// the pods the operator creates (a ResourceQuota used up, a LimitRange, Pod Security, a webhook,
// an invalid template). Every KubeRay version retries for good and reports the refusal only in
// the RayCluster's status and Events (refusals.go); kubectl get pods shows nothing at all. A
// shortfall without a refusal is left alone: the operator may simply be about to create them.
const RuleWorkersMissing = "workers-missing"

// workersMissing reports, per worker group short of pods past OperatorGrace, the refusal the
// operator reported for its workers.
func workersMissing(ix *index, c *clusterView) []Finding {
	if c.suspended() || c.rc.DeletionTimestamp != nil || ix.s.Now.Sub(c.rc.CreationTimestamp.Time) <= ix.opts.OperatorGrace {
		return nil
	}
	have := map[string]int{}
	for _, w := range c.workers {
		if ray.Live(w) {
			have[w.Labels[ray.LabelGroup]]++
		}
	}
	var out []Finding
	for i := range c.rc.Spec.WorkerGroupSpecs {
		g := &c.rc.Spec.WorkerGroupSpecs[i]
		want := desiredPods(g)
		if have[g.GroupName] >= want {
			continue
		}
		r := ix.refusalFor(c, "worker", g.GroupName)
		if r == nil {
			continue
		}
		ev := map[string]string{
			"group": g.GroupName, "pods": fmt.Sprint(have[g.GroupName]), "desired": fmt.Sprint(want),
			"refusal": r.text, "refusalSource": r.source(),
		}
		msg := fmt.Sprintf("worker group %s has %d of %d pods: the API server refuses the operator's new worker pods: %s",
			g.GroupName, have[g.GroupName], want, r.describe(ix.s.Now))
		out = append(out, c.finding(RuleWorkersMissing, state.ClusterRef(c.rc), msg, r.remedy(c), ev))
	}
	return out
}

// desiredPods is how many pods a worker group wants: its replicas (none while suspended) times
// its hosts per replica.
func desiredPods(g *rayv1.WorkerGroupSpec) int {
	n := int32(0)
	if g.Replicas != nil {
		n = *g.Replicas
	}
	if g.Suspend != nil && *g.Suspend {
		n = 0
	}
	return int(n * max(g.NumOfHosts, 1))
}
