package diagnose

import (
	"testing"
)

// The RayService rules' findings, in full: what a person acts on is the object, the message and
// the evidence (kuberay #5088, #5148, #1557).
func TestRayServiceFindingDetails(t *testing.T) {
	cases := []struct {
		fixture, rule, object string
		contains              []string
		evidence              map[string]string
	}{
		{"rayservice-upgrade-stuck", RuleRayServiceUpgradeStuck, "RayService ml/svc",
			[]string{"RayService ml/svc has been upgrading for 40m (UpgradeInProgress=True since 2025-06-01T11:20:00Z)",
				"pending RayCluster svc-raycluster-n3w45 has no Ready head: head pod svc-raycluster-n3w45-head-p9q8r is Pending, Unschedulable (HeadPodReady=False, HeadPodNotFound)",
				"traffic stays on the active cluster svc-raycluster-q7x9z", "kuberay #5088",
				"kubectl ray doctor raycluster/svc-raycluster-n3w45 -n ml"},
			map[string]string{"upgradingFor": "40m", "pendingCluster": "svc-raycluster-n3w45", "activeCluster": "svc-raycluster-q7x9z", "headPodReady": "False"}},
		{"serve-no-endpoints", RuleServeNoEndpoints, "Service ml/svc-serve-svc",
			[]string{"serve Service svc-serve-svc has no ready endpoint while RayService ml/svc reports Ready=True, serviceStatus=Running",
				"kuberay #5148", "kubectl get pods -n ml -l ray.io/cluster=svc-raycluster-q7x9z,ray.io/serve=true"},
			map[string]string{"readyEndpoints": "0", "selectedCluster": "svc-raycluster-q7x9z", "activeCluster": "svc-raycluster-q7x9z", "rayServiceStatus": "Ready=True,serviceStatus=Running"}},
		{"serve-selector-other-cluster", RuleServeNoEndpoints, "Service ml/svc-serve-svc",
			[]string{"serve Service svc-serve-svc selects RayCluster svc-raycluster-q7x9z, not the active cluster svc-raycluster-n3w45, and has 0 ready endpoints", "kuberay #5148",
				"kubectl logs -n ray-system deploy/kuberay-operator"},
			map[string]string{"selectedCluster": "svc-raycluster-q7x9z", "activeCluster": "svc-raycluster-n3w45"}},
		{"gcs-ft-finalizer-stuck", RuleGCSFTFinalizerStuck, "RayCluster ml/raycluster-a",
			[]string{"RayCluster ml/raycluster-a has been deleting for 20m, held by finalizer ray.io/gcs-ft-redis-cleanup-finalizer",
				"cleanup Job raycluster-a-redis-cleanup is suspended", "kuberay #4773",
				"removing the finalizer by hand leaves the GCS data of storage namespace rc-a-uid in Redis",
				"kubectl ray heal raycluster-a -n ml --remove-gcs-ft-finalizer", "kuberay #1557, #4721, #4767"},
			map[string]string{"cleanupJob": "raycluster-a-redis-cleanup", "jobState": "suspended", "storageNamespace": "rc-a-uid", "deletingFor": "20m"}},
		{"gcs-ft-finalizer-head-left", RuleGCSFTFinalizerStuck, "RayCluster ml/raycluster-a",
			[]string{"waits for the head pod to be gone", "raycluster-a-head-abcde (Terminating) is still there"},
			map[string]string{"cleanupJob": "none"}},
		{"gcs-ft-finalizer-job-complete", RuleGCSFTFinalizerStuck, "RayCluster ml/raycluster-a",
			[]string{"is Complete and every KubeRay release removes the finalizer once it finished, so the operator is not reconciling",
				"Redis holds nothing of storage namespace rc-a-uid"},
			map[string]string{"jobState": "Complete"}},
		{"gcs-ft-finalizer-jobs-blind", RuleGCSFTFinalizerStuck, "RayCluster ml/raycluster-a",
			[]string{"Jobs could not be listed, so the cleanup Job's state is unknown"}, map[string]string{"cleanupJob": "not visible"}},
	}
	for _, c := range cases {
		t.Run(c.fixture+"/"+c.rule, func(t *testing.T) {
			f := loadFixture(t, c.fixture)
			r := Diagnose(&f.snap, DefaultOptions())
			wantFinding(t, r.Findings, c.rule, c.object, c.contains, c.evidence, true)
		})
	}
}
