package repair

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// planFailedWorkers deletes the terminal workers a worker-failed finding names: the operator then
// creates new ones. KubeRay v1.1.1 never deletes a terminal worker whose restartPolicy is Always
// and counts it among the group's workers, so without this the group stays short (kuberay #2125).
// doctor names only workers past the operator's grace, or that no operator will replace. Each
// must still be a terminal Ray worker its RayCluster controls, not being deleted.
func (ix *index) planFailedWorkers(f diagnose.Finding, add func(Action), skip func(Skip)) {
	for _, ref := range f.Facts.Pods {
		pod := ix.pods[types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}]
		if pod == nil || ref.UID != "" && string(pod.UID) != ref.UID {
			skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: ref, Why: "the pod is not in the snapshot"})
			continue
		}
		c, why := ix.controller(f.Cluster, pod, "worker", ray.IsWorker)
		switch {
		case why != "":
		case pod.DeletionTimestamp != nil:
			why = "the worker is already being deleted"
		case !ray.Terminal(pod):
			why = fmt.Sprintf("the worker is %s, not terminal; heal never deletes a pod that may be running", phaseOf(pod))
		}
		if why != "" {
			skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: state.PodRef(pod), Why: why})
			continue
		}
		summary, full := terminalWhy(pod, "worker")
		add(Action{
			Rule: f.Rule, Cluster: state.ClusterRef(c), Pod: state.PodRef(pod),
			ResourceVersion: pod.ResourceVersion, Node: pod.Spec.NodeName, Summary: summary, Why: full,
		})
	}
}

// workerRules are the rules whose actions delete workers: they never count as head deletes, and
// heal waits for no replacement head after them.
var workerRules = map[string]bool{diagnose.RuleWorkersStale: true, diagnose.RuleWorkerFailed: true}

// Role is "head" or "worker": the kind of Ray pod the action deletes.
func (a Action) Role() string {
	if workerRules[a.Rule] {
		return "worker"
	}
	return "head"
}
