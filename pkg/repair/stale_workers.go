package repair

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// planStaleWorkers deletes the workers a workers-stale finding names, only with StaleWorkers
// (kuberay #1141): KubeRay creates new workers for the group, and they join the new head. Each
// worker must be a Running Ray worker its RayCluster controls, not being deleted.
func (ix *index) planStaleWorkers(f diagnose.Finding, opts Options, add func(Action), skip func(Skip)) {
	if !opts.StaleWorkers {
		skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: f.Object,
			Why: "heal deletes stale workers only when asked: pass " + opts.name(SetStaleWorkers) + " (KubeRay creates new workers that join the new head)"})
		return
	}
	for _, ref := range f.Facts.Pods {
		pod := ix.pods[types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}]
		if pod == nil || ref.UID != "" && string(pod.UID) != ref.UID {
			skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: ref, Why: "the pod is not in the snapshot"})
			continue
		}
		if why := ix.workerNotOwnedWhy(f.Cluster, pod); why != "" {
			skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: state.PodRef(pod), Why: why})
			continue
		}
		c := ix.cluster(f.Cluster, pod)
		add(Action{
			Rule: f.Rule, Pod: state.PodRef(pod), ResourceVersion: pod.ResourceVersion, Node: pod.Spec.NodeName,
			Cluster: state.ClusterRef(c),
			Why: fmt.Sprintf("worker left from before head %s restarted, without GCS fault tolerance: it belongs to the previous Ray cluster; "+
				"deleting it lets the operator create a worker that joins the new head", f.Facts.Head),
		})
	}
}

// workerNotOwnedWhy says why pod is not a worker heal may delete, or "".
func (ix *index) workerNotOwnedWhy(clusterRef state.Ref, pod *corev1.Pod) string {
	if _, why := ix.controller(clusterRef, pod, "worker", ray.IsWorker); why != "" {
		return why
	}
	if pod.DeletionTimestamp != nil {
		return "the worker is already being deleted"
	}
	if pod.Status.Phase != corev1.PodRunning {
		return fmt.Sprintf("the worker is %s, not Running: no longer the stale worker doctor saw", phaseOf(pod))
	}
	return ""
}
