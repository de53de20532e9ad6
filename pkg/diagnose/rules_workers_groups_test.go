package diagnose

import "testing"

// A terminal worker is named with the kubelet's reason, the group's count and whether the
// operator will replace it: KubeRay v1.1.1 never does (restartPolicy Always), v1.5.0 does within
// its grace, so one left past it means the operator is not reconciling.
func TestWorkerFailedDetails(t *testing.T) {
	checkDetails(t, []detailCase{
		{"worker-failed-v111", RuleWorkerFailed, "RayCluster ml/raycluster-a",
			[]string{"1 worker pod(s) of group small are terminal and never run again",
				"raycluster-a-worker-small-xyz12 (Evicted: The node was low on resource: memory)",
				"the group runs 0 of 1 desired workers", "KubeRay v1.1.1 will not replace them", "kuberay #2125",
				"kubectl ray heal raycluster-a -n ml", "kubectl delete pod raycluster-a-worker-small-xyz12 -n ml"},
			map[string]string{"group": "small", "workers": "raycluster-a-worker-small-xyz12", "running": "0/1", "age": "20m", "operator": "KubeRay v1.1.1"}},
		{"worker-failed-admission", RuleWorkerFailed, "RayCluster ml/raycluster-a",
			[]string{"raycluster-a-worker-small-xyz12 (OutOfcpu: Pod was rejected: Node didn't have enough resource: cpu, requested: 4000, used: 2000, capacity: 4000)",
				"KubeRay v1.1.1 will not replace them"}, nil},
		{"worker-failed-overdue", RuleWorkerFailed, "RayCluster ml/raycluster-a",
			[]string{"raycluster-a-worker-small-xyz12 (Terminated: Pod was terminated in response to imminent node shutdown)",
				"KubeRay v1.5.0 should have replaced them within 2m, so the operator is not reconciling this cluster",
				"kubectl logs -n ray-system deploy/kuberay-operator"},
			map[string]string{"age": "10m", "operator": "KubeRay v1.5.0"}},
	})
}

// A worker Unschedulable past PendingTooLong is named with the scheduler's own words and the
// group's count.
func TestWorkerPendingDetails(t *testing.T) {
	checkDetails(t, []detailCase{
		{"workers-pending-unschedulable", RuleWorkerPending, "Pod ml/raycluster-a-worker-small-xyz12",
			[]string{"1 worker pod(s) of group small are Pending, the longest for 20m: Unschedulable: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu;",
				"the group runs 0 of 1 desired workers", "kubectl describe pod raycluster-a-worker-small-xyz12 -n ml"},
			map[string]string{"group": "small", "pending": "1", "running": "0/1", "age": "20m", "reason": "Unschedulable",
				"schedulerMessage": "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."}},
	})
}

// A crash loop of any worker container is named under that container, with the remedy for its
// cause.
func TestWorkerCrashLoopDetails(t *testing.T) {
	checkDetails(t, []detailCase{
		{"worker-crashloop", RuleWorkerCrashLoop, "Pod ml/raycluster-a-worker-small-xyz12",
			[]string{"1 worker pod(s) of group small keep failing in container ray-worker: worker raycluster-a-worker-small-xyz12 is CrashLoopBackOff, last exit OOMKilled (7 restarts)",
				"container ray-worker ran out of memory: raise its memory limit in the workerGroupSpecs entry small"},
			map[string]string{"group": "small", "container": "ray-worker", "reason": "CrashLoopBackOff", "lastState": "OOMKilled", "restarts": "7"}},
		{"worker-crashloop-sidecar", RuleWorkerCrashLoop, "Pod ml/raycluster-a-worker-small-xyz12",
			[]string{"keep failing in container log-shipper: worker raycluster-a-worker-small-xyz12 is CrashLoopBackOff (12 restarts)",
				"kubectl logs raycluster-a-worker-small-xyz12 -n ml -c log-shipper --previous"},
			map[string]string{"container": "log-shipper"}},
	})
}
