package diagnose

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRuleFixtures runs every fixture in testdata/rules (popeye style: one fixture per rule and
// case) and asserts the exact set of "<severity> <rule>" it produces, no more and no less.
func TestRuleFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "rules", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	names := []string{"healthy"}
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, name)
			opts := DefaultOptions()
			opts.Risks = true // the risks' fixtures fire them; TestRisksOnlyWhenAsked holds the default
			opts.SpecOnly = f.files
			r := Diagnose(&f.snap, opts)
			g, w := f.gotChecked(r), slices.Clone(f.want)
			slices.Sort(g)
			slices.Sort(w)
			if !slices.Equal(g, w) {
				for _, fd := range r.Findings {
					t.Logf("%s %s %s: %s", fd.Severity, fd.Rule, fd.Object.Name, fd.Message)
				}
				t.Fatalf("findings = %q, want %q", g, w)
			}
		})
	}
}

// A live doctor leaves the risks out unless asked (--risks); doctor -f (SpecOnly) reports them.
func TestRisksOnlyWhenAsked(t *testing.T) {
	for _, name := range []string{"head-evictable-first", "serve-head-not-excluded", "shm-smaller-than-object-store"} {
		f := loadFixture(t, name)
		has := func(opts Options) bool {
			for _, fd := range Diagnose(&f.snap, opts).Findings {
				if IsRisk(fd.Rule) {
					return true
				}
			}
			return false
		}
		risks, spec := DefaultOptions(), DefaultOptions()
		risks.Risks, spec.SpecOnly = true, true
		if has(DefaultOptions()) || !has(risks) || !has(spec) {
			t.Errorf("%s: a risk by default %v, with Risks %v, with SpecOnly %v; want false, true, true", name, has(DefaultOptions()), has(risks), has(spec))
		}
	}
}

// The message, the object and the evidence are what a person acts on: check the important ones.
func TestFindingDetails(t *testing.T) {
	checkDetails(t, []detailCase{
		{"head-evicted-old-operator", RuleHeadEvicted, "Pod ml/raycluster-a-head-abcde",
			[]string{"evicted from node node-1 12m ago", "low on resource: ephemeral-storage", "KubeRay v1.1.1 will not replace it", "kuberay #2125", "kubectl ray heal raycluster-a -n ml"},
			map[string]string{"node": "node-1", "reason": "Evicted", "age": "12m", "operator": "KubeRay v1.1.1"}},
		{"head-evicted-new-operator-late", RuleHeadEvicted, "Pod ml/raycluster-a-head-abcde",
			[]string{"KubeRay v1.5.0 should have replaced it within 2m", "not reconciling", "kubectl logs -n ray-system deploy/kuberay-operator"}, nil},
		{"head-evicted-new-operator-recent", RuleHeadEvicted, "Pod ml/raycluster-a-head-abcde",
			[]string{"KubeRay v1.5.0 should replace it within 2m"}, map[string]string{"age": "30s"}},
		{"head-evicted-unknown-operator", RuleHeadEvicted, "Pod ml/raycluster-a-head-abcde",
			[]string{"version unknown", "may not replace it", "kubectl ray heal"}, nil},
		{"head-evicted-unknown-and-old-operators", RuleHeadEvicted, "Pod ml/raycluster-a-head-abcde",
			[]string{"KubeRay v1.1.1 will not replace it", "kuberay #2125"}, map[string]string{"operator": "KubeRay v1.1.1"}},
		{"head-evicted-no-operator", RuleHeadEvicted, "Pod ml/raycluster-a-head-abcde",
			[]string{"nothing will replace it: no running KubeRay operator"}, nil},
		{"head-terminated", RuleHeadTerminated, "Pod ml/raycluster-a-head-abcde",
			[]string{"is Succeeded", "exited 0 (Completed)", "should have replaced it"}, map[string]string{"restartPolicy": "Never"}},
		{"head-terminating-stuck", RuleHeadTerminatingStuck, "Pod ml/raycluster-a-head-abcde",
			[]string{"terminating 9m30s past its grace period", "node-1 is unreachable", "--force"}, map[string]string{"nodeState": "unreachable"}},
		{"head-terminating-unreported-node", RuleHeadTerminatingStuck, "Pod ml/raycluster-a-head-abcde",
			[]string{"terminating 9m30s past its grace period", "find out why the kubelet on node-1 does not finish the deletion"}, map[string]string{"nodeState": ""}},
		{"head-terminating-finalizer", RuleHeadTerminatingStuck, "Pod ml/raycluster-a-head-abcde",
			[]string{"finalizers example.com/backup-logs", "waits for its finalizers"}, map[string]string{"finalizers": "example.com/backup-logs"}},
		{"head-duplicate", RuleHeadTerminatingStuck, "Pod ml/raycluster-a-head-old99", []string{"node-3 is gone"}, map[string]string{"nodeState": "gone"}},
		{"head-duplicate", RuleHeadDuplicate, "Pod ml/raycluster-a-head-old99",
			[]string{"has 2 head pods", "raycluster-a-head-old99 is an extra head (Terminating)"}, map[string]string{"kept": "raycluster-a-head-abcde"}},
		{"head-pending-unschedulable", RuleHeadPending, "Pod ml/raycluster-a-head-abcde",
			[]string{"Unschedulable: 0/2 nodes are available: 2 Insufficient cpu."}, nil},
		{"head-pending-gcs-store-missing", RuleHeadPending, "Pod ml/raycluster-a-head-abcde",
			[]string{`Unschedulable: 0/2 nodes are available: persistentvolumeclaim "gcs-data" not found.`, "(PVC gcs-data holds the head's RocksDB GCS store)",
				"create PVC gcs-data in namespace ml: spec.gcsFaultToleranceOptions.storage.claimName names it", "the operator makes raycluster-a-gcs-pvc"},
			map[string]string{"gcsStoreClaim": "gcs-data"}},
		{"head-pending-too-long", RuleHeadPending, "Pod ml/raycluster-a-head-abcde", []string{"Pending for 10m (longer than 5m) on node node-1"}, nil},
		{"head-crashloop-oom", RuleHeadCrashLoop, "Pod ml/raycluster-a-head-abcde",
			[]string{"CrashLoopBackOff (7 restarts)", "last exit OOMKilled", "memory limit"}, map[string]string{"lastState": "OOMKilled"}},
		{"image-pull-failed-head", RuleImagePullFailed, "Pod ml/raycluster-a-head-abcde",
			[]string{"head pod raycluster-a-head-abcde cannot pull image rayproject/ray:2.99.0 for container ray-head (ImagePullBackOff): " +
				`Back-off pulling image "rayproject/ray:2.99.0": ErrImagePull: failed to pull and unpack image "docker.io/rayproject/ray:2.99.0": not found`,
				"fix the image name, its tag or the pull secret in headGroupSpec.template", "heal does not act"},
			map[string]string{"reason": "ImagePullBackOff", "image": "rayproject/ray:2.99.0", "container": "ray-head"}},
		{"image-pull-failed-worker", RuleImagePullFailed, "Pod ml/raycluster-a-worker-small-xyz12",
			[]string{"2 worker pod(s) of group small cannot pull images; worker raycluster-a-worker-small-xyz12 cannot pull image rayproject/ray:2.9.0-typo for container ray-worker (ErrImagePull): failed to pull and unpack image",
				"the workerGroupSpecs entry small"},
			map[string]string{"group": "small", "workers": "raycluster-a-worker-small-xyz12,raycluster-a-worker-small-zz999", "failing": "2"}},
		{"head-missing", RuleHeadMissing, "RayCluster ml/raycluster-a", []string{"RayCluster ml/raycluster-a has no head pod"}, nil},
		{"head-missing-quota", RuleHeadMissing, "RayCluster ml/raycluster-a",
			[]string{`has no head pod: the API server refuses the operator's head pod: pods "raycluster-a-head-2x7zf" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=0, limited: pods=0 ` +
				"(the RayCluster's status condition ReplicaFailure FailedCreateHeadPod; 6 Events FailedToCreateHeadPod, the last 20s ago)",
				"the ResourceQuota compute is used up", "kubectl describe resourcequota compute -n ml"},
			map[string]string{"refusalSource": "status condition ReplicaFailure FailedCreateHeadPod; Events FailedToCreateHeadPod"}},
		{"workers-missing-quota-v111", RuleWorkersMissing, "RayCluster ml/raycluster-a",
			[]string{`worker group small has 1 of 3 pods: the API server refuses the operator's new worker pods: pods "raycluster-a-worker-small-p6jbm" is forbidden: exceeded quota: q` +
				`, requested: pods=1, used: pods=2, limited: pods=2 (the RayCluster's status reason, with state failed; 1 Event PodReconciliationError, 2m ago)`,
				"the ResourceQuota q is used up"},
			map[string]string{"group": "small", "pods": "1", "desired": "3"}},
		{"spec-invalid", RuleSpecInvalid, "RayCluster ml/raycluster-a",
			[]string{"RayCluster ml/raycluster-a: the operator refuses its spec and reconciles nothing of it (no head, no workers, no status) until it changes: rayStartParams['labels'] is not supported for Head group; please use the top-level Labels field instead (Event InvalidRayClusterSpec, 2 time(s), last 9m59s ago; generation 1, observed 0)",
				"kubectl edit raycluster raycluster-a -n ml"},
			map[string]string{"reason": "InvalidRayClusterSpec", "generation": "1", "observedGeneration": "0"}},
		{"spec-invalid-cert-manager", RuleSpecInvalid, "RayCluster ml/raycluster-a",
			[]string{"the operator refuses its spec and reconciles nothing of it (no head, no workers, no status) until it changes: tlsOptions requires cert-manager, but cert-manager is not installed",
				"install cert-manager, then restart the KubeRay operator (kubectl rollout restart deploy/kuberay-operator -n ray-system): it looks for cert-manager once, at its start",
				", or fix the spec as the message says: kubectl edit raycluster raycluster-a -n ml"},
			map[string]string{"reason": "InvalidRayClusterSpec"}},
		{"spec-invalid-gate-off", RuleSpecInvalid, "RayCluster ml/raycluster-a",
			[]string{"spec.networkPolicy requires the RayClusterNetworkPolicy feature gate to be enabled",
				"turn the feature gate on: add --feature-gates=RayClusterNetworkPolicy=true to the KubeRay operator's args (kubectl edit deploy/kuberay-operator -n ray-system), or the Helm chart's featureGates"},
			nil},
		{"rayjob-submission-failed", RuleRayJobFailed, "RayJob ml/etl",
			[]string{"RayJob ml/etl Failed 40m ago: its submitter could not submit the Ray job: Job submission has failed. Reason: BackoffLimitExceeded. Message: Job has reached the specified backoff limit",
				"read the submitter's log: kubectl logs job/etl -n ml (KubeRay keeps the submitter Job for its logs)", "submit the RayJob again"},
			map[string]string{"reason": "SubmissionFailed", "jobId": "etl-9f8rk", "rayCluster": "etl-raycluster-x7k2p"}},
		{"rayjob-deadline", RuleRayJobFailed, "RayJob ml/nightly",
			[]string{"it ran past spec.activeDeadlineSeconds (600s): The RayJob has passed the activeDeadlineSeconds", "raise spec.activeDeadlineSeconds"},
			map[string]string{"reason": "DeadlineExceeded"}},
		{"rayjob-status-check-timeout", RuleRayJobFailed, "RayJob ml/nightly",
			[]string{"the operator could not read the Ray job's status from the dashboard for too long, and gave it up without retrying: Job status checks have been failing since 2025-06-01 11:20:00; exceeded timeout of 900s",
				"kubectl ray doctor raycluster-a", "the Ray job may have gone on running"},
			map[string]string{"reason": "JobStatusCheckTimeoutExceeded"}},
		{"gcs-store-upgrade-blocked", RuleGCSStoreUpgradeBlocked, "RayCluster ml/svc-raycluster-q7x9z",
			[]string{"RayService ml/svc keeps its GCS in a RocksDB store on PVC svc-gcs (head pod svc-raycluster-q7x9z-head-fghij's GCS store), which every cluster it makes shares",
				"its next NewCluster upgrade runs the new cluster beside the old one", "remove storage.claimName"},
			map[string]string{"claim": "svc-gcs", "upgradeStrategy": "NewCluster", "rayService": "svc"}},
		{"gcs-store-shared", RuleGCSStoreShared, "Pod ml/raycluster-b-head-vwxyz",
			[]string{"RayCluster ml/raycluster-b keeps its GCS in the RocksDB store on PVC shared-gcs, which the head of RayCluster raycluster-a (raycluster-a-head-abcde, Running, Ready) already holds",
				"RocksDB admits one writer", "(its head: Running, not Ready)", "remove spec.gcsFaultToleranceOptions.storage.claimName from raycluster-b (the operator then makes raycluster-b-gcs-pvc)"},
			map[string]string{"claim": "shared-gcs", "holder": "raycluster-a", "holderPod": "raycluster-a-head-abcde", "pod": "raycluster-b-head-vwxyz"}},
		{"gcs-store-shared-upgrade", RuleGCSStoreShared, "Pod ml/svc-raycluster-n3w45-head-p9q8r",
			[]string{"RayCluster ml/svc-raycluster-n3w45 (RayService svc) keeps its GCS in the RocksDB store on PVC svc-gcs",
				"RayService svc's clusters, so its zero-downtime (NewCluster) upgrade never completes",
				"remove spec.rayClusterConfig.gcsFaultToleranceOptions.storage.claimName from RayService svc"},
			map[string]string{"claim": "svc-gcs", "holder": "svc-raycluster-q7x9z", "rayService": "svc"}},
		{"incremental-upgrade-blocked", RuleIncrementalUpgradeBlocked, "RayService ml/svc",
			[]string{"RayService ml/svc (NewClusterWithIncrementalUpgrade, gatewayClassName \"istio\") is upgrading from RayCluster svc-raycluster-q7x9z to svc-raycluster-n3w45 for 30m, and the operator moves no capacity",
				"its Gateway svc-gateway is not ready: Accepted=Unknown (Pending: Waiting for controller), Programmed=Unknown (Pending: Waiting for controller)",
				"(new cluster: target capacity 0%, traffic 0%; old: 100%, 100%)", "never times out",
				"kubectl describe gateway svc-gateway -n ml", "put spec.rayClusterConfig back as it was to roll back to RayCluster svc-raycluster-q7x9z"},
			map[string]string{"gatewayClass": "istio", "gateway": "svc-gateway", "pendingCluster": "svc-raycluster-n3w45", "pendingTargetCapacity": "0%", "since": "30m"}},
		{"incremental-upgrade-no-gateway-api", RuleIncrementalUpgradeBlocked, "RayService ml/svc",
			[]string{"the cluster has no Gateway API (no gateways.gateway.networking.k8s.io)", "so it gets no RayCluster; no Event or status says so",
				"install the Gateway API's CRDs (standard channel; the operator then goes on by itself)", "or set spec.upgradeStrategy.type to NewCluster"},
			map[string]string{"gatewayAPI": "absent", "gatewayClass": "istio"}},
		{"raycronjob-not-scheduling", RuleRayCronJobNotScheduling, "RayCronJob ml/nightly",
			[]string{"RayCronJob ml/nightly made no RayJob for its tick at 2025-06-01T11:05:00Z, 55m ago (schedule \"*/5 * * * *\" in UTC, the operator's local zone",
				"its last was for the tick at 2025-06-01T11:00:00Z): 12 ticks missed: the operator refuses its spec: ml/nightly: invalid RayJob template",
				"(1 Warning Event InvalidRayCronJobSpec, 57m ago)", "fix the spec as the message says (kubectl edit raycronjob nightly -n ml)",
				"the operator makes one RayJob for each tick missed since 2025-06-01T11:05:00Z (12 now)", "delete the RayCronJob and create it again"},
			map[string]string{"schedule": "*/5 * * * *", "missedTick": "2025-06-01T11:05:00Z", "missedTicks": "12", "late": "55m",
				"lastScheduleTime": "2025-06-01T11:00:00Z", "operatorWarning": "InvalidRayCronJobSpec"}},
		{"raycronjob-not-scheduling-gate-off", RuleRayCronJobNotScheduling, "RayCronJob ml/hourly",
			[]string{"made no RayJob for its tick at 2025-06-01T11:30:00Z, 30m ago", "it has made none since its creation 60m ago): 1 tick missed",
				"operator ray-system/kuberay-operator does not turn on the feature gate RayCronJob (alpha, off by default)",
				"add --feature-gates=RayCronJob=true to the operator's args (kubectl edit deploy kuberay-operator -n ray-system)"},
			map[string]string{"missedTicks": "1"}},
		{"raycronjob-not-scheduling-schedule", RuleRayCronJobNotScheduling, "RayCronJob ml/daily",
			[]string{"RayCronJob ml/daily never makes a RayJob: invalid cron schedule: expected exactly 5 fields, found 4", "fix spec.schedule or spec.timeZone (kubectl edit raycronjob daily -n ml)"},
			map[string]string{"schedule": "every day at 3"}},
		{"rayjob-status-check-failing", RuleRayJobStatusCheckFailing, "RayJob ml/nightly",
			[]string{"RayJob ml/nightly is Running, but the operator has not been able to read its Ray job's status from the dashboard for 3m (since 2025-06-01T11:57:00Z)",
				"it fails the RayJob in 7m, with reason JobStatusCheckTimeoutExceeded and no retry", "(timeout 600s, operator ray-system/kuberay-operator's RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS)",
				"kubectl ray doctor raycluster-a --ray", "raise RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS in the operator's env"},
			map[string]string{"failingSince": "2025-06-01T11:57:00Z", "age": "3m", "timeout": "600s", "jobDeploymentStatus": "Running"}},
		{"rayjob-cronjob-run", RuleRayJobFailed, "RayJob ml/nightly-29149260",
			[]string{"RayJob ml/nightly-29149260 (RayCronJob nightly's run for 2025-06-01T11:00:00Z) Failed",
				"raise spec.activeDeadlineSeconds", "in RayCronJob nightly's spec.jobTemplate, which each run copies (kubectl edit raycronjob nightly -n ml): this run is not run again"},
			map[string]string{"rayCronJob": "nightly", "scheduledFor": "2025-06-01T11:00:00Z", "reason": "DeadlineExceeded"}},
		{"rayjob-cronjob-run", RuleRayJobFinishedHolds, "RayJob ml/nightly-29149260",
			[]string{"set spec.shutdownAfterJobFinishes: true (with spec.ttlSecondsAfterFinished to keep the cluster a while for its logs) in RayCronJob nightly's spec.jobTemplate (each of its runs makes a RayCluster of its own"},
			map[string]string{"rayCronJob": "nightly"}},
		{"rayjob-validation-failed", RuleRayJobFailed, "RayJob ml/bad",
			[]string{"RayJob ml/bad ValidationFailed: the operator refused its spec: The RayJob spec is invalid ml/bad", "does not reconcile a RayJob again after ValidationFailed"},
			map[string]string{"jobDeploymentStatus": "ValidationFailed"}},
		{"head-restart-disabled", RuleRayJobFailed, "RayJob ml/nightly",
			[]string{"RayJob ml/nightly Failed: the Ray job failed: Ray head pod not found", "kubectl logs -l ray.io/cluster=raycluster-a,ray.io/node-type=head -c ray-job-submitter -n ml"},
			map[string]string{"submissionMode": "SidecarMode"}},
		{"rayjob-initializing", RuleRayJobInitializing, "RayJob ml/nightly",
			[]string{"RayJob ml/nightly has been Initializing for 25m (longer than 10m): the operator submits only once RayCluster raycluster-a is ready, and it is not: head-pending: ",
				"act on RayCluster raycluster-a's findings (head-pending)"},
			map[string]string{"clusterFindings": "head-pending", "age": "25m"}},
		{"rayjob-cluster-failed", RuleRayJobClusterFailed, "RayJob ml/nightly",
			[]string{"RayJob ml/nightly has been Initializing for 25m and its RayCluster raycluster-a has failed: the API server refuses its head pod: pods \"raycluster-a-head-2x7zf\" is forbidden: exceeded quota: compute",
				"(the RayCluster's status condition ReplicaFailure FailedCreateHeadPod)", "it retries the refused pod forever",
				"the ResourceQuota compute is used up"},
			map[string]string{"clusterStatus": "condition ReplicaFailure FailedCreateHeadPod", "age": "25m"}},
		{"rayjob-initializing-refused", RuleRayJobInitializing, "RayJob ml/nightly",
			[]string{"the operator submits only once RayCluster raycluster-a is ready, and the API server refuses its head pod: pods \"raycluster-a-head-2rwwk\" is forbidden: exceeded quota: compute",
				"the ResourceQuota compute is used up"}, nil},
		{"rayjob-finished-holding", RuleRayJobFinishedHolds, "RayJob ml/nightly",
			[]string{"RayJob ml/nightly finished (Complete) 3h ago and its RayCluster raycluster-a still runs 2 pod(s): neither shutdownAfterJobFinishes nor a deletionStrategy is set",
				"set spec.shutdownAfterJobFinishes: true", "kubectl delete raycluster raycluster-a -n ml now if you are done with it"},
			map[string]string{"pods": "2"}},
		{"rayjob-initializing-cluster-not-found", RuleRayJobInitializing, "RayJob ml/adhoc",
			[]string{"its RayCluster shared does not exist, and the operator reports: RayCluster ml/shared set in the clusterSelector is not found. It must be created manually (12 Warning Events RayClusterNotFound, the last 2m ago)",
				"point spec.clusterSelector"},
			map[string]string{"operatorWarning": "RayClusterNotFound"}},
		{"rayjob-initializing-submitter-refused", RuleRayJobInitializing, "RayJob ml/nightly",
			[]string{`the operator works on it with RayCluster raycluster-a (its state is "ready"), and reports: Failed to create new Kubernetes Job ml/nightly: jobs.batch "nightly" is forbidden: exceeded quota: batch-jobs`,
				"(9 Warning Events FailedToCreateRayJobSubmitter, the last 60s ago)", "the ResourceQuota batch-jobs is used up"},
			map[string]string{"operatorWarning": "FailedToCreateRayJobSubmitter"}},
		{"rayservice-no-cluster", RuleRayServiceNoCluster, "RayService serve/web",
			[]string{`RayService serve/web has no RayCluster 10m after it was created: the operator reports: Failed to create the RayCluster serve/web-raycluster-5kq2x: rayclusters.ray.io "web-raycluster-5kq2x" is forbidden: exceeded quota: ray`,
				"(14 Warning Events FailedToCreateRayCluster, the last 20s ago); its Ready condition is False (Initializing)",
				"the ResourceQuota ray is used up"},
			map[string]string{"operatorWarning": "FailedToCreateRayCluster", "pendingCluster": "web-raycluster-5kq2x", "ready": "Initializing"}},
		{"rayjob-submitter-retrying", RuleRayJobSubmitterFailing, "RayJob ml/nightly",
			[]string{"RayJob ml/nightly is Running, but 2 attempt(s) of its submitter failed, the last: pod nightly-bbbbb exited with code 1 (Error); attempt 3 (pod nightly-ccccc) runs until its backoffLimit is used up",
				"kubectl logs pod/nightly-bbbbb -n ml -c ray-job-submitter"},
			map[string]string{"failedAttempts": "2", "lastFailedPod": "nightly-bbbbb"}},
		{"rayjob-submitter-image", RuleRayJobSubmitterFailing, "RayJob ml/nightly",
			[]string{`its submitter pod nightly-8vq2m cannot start container ray-job-submitter: ImagePullBackOff (image rayproject/ray:2.9.O): Back-off pulling image "rayproject/ray:2.9.O"`,
				"fix spec.submitterPodTemplate", "kubectl describe pod nightly-8vq2m -n ml"},
			map[string]string{"reason": "ImagePullBackOff", "pod": "nightly-8vq2m", "image": "rayproject/ray:2.9.O"}},
		{"rayjob-submitter-pending", RuleRayJobSubmitterFailing, "RayJob ml/nightly",
			[]string{"its submitter pod nightly-8vq2m has been Pending for 15m: Unschedulable: 0/3 nodes are available: 3 Insufficient cpu"}, nil},
		{"workers-missing-events-only", RuleWorkersMissing, "RayCluster ml/raycluster-a",
			[]string{`pods "raycluster-a-small-worker-6d55v" is forbidden: maximum cpu usage per Container is 500m, but limit is 1 (3 Events FailedToCreateWorkerPod, the last 30s ago)`,
				"outside the namespace's LimitRange", "kubectl describe limitrange -n ml"},
			map[string]string{"refusalSource": "Events FailedToCreateWorkerPod"}},
		{"status-stale", RuleStatusStale, "RayCluster ml/raycluster-a",
			[]string{"reports ready (state=ready, HeadPodReady=True) but its head pod raycluster-a-head-abcde Running, not Ready"}, nil},
		{"node-pressure", RuleNodePressure, "Node /node-2", []string{"node node-2 running 1 Ray pod is DiskPressure"}, map[string]string{"conditions": "DiskPressure"}},
		{"operator-outdated", RuleOperatorOutdated, "Deployment ray-system/kuberay-operator", []string{"runs v1.1.1", "fixed in v1.2.0"}, nil},
		{"operator-not-ready", RuleOperatorMissing, "Deployment ray-system/kuberay-operator", []string{"has no ready replica"}, nil},
		{"workers-not-ready", RuleWorkersNotReady, "RayCluster ml/raycluster-a",
			[]string{"1 of 1 workers not Ready for up to 25m", "head restarted 25m ago", "GCS fault tolerance is off"}, map[string]string{"gcsFaultTolerance": "off"}},
		{"serve-head-in-service", RuleServeHeadInService, "Service ml/svc-serve-svc",
			[]string{"sends traffic to head pod svc-raycluster-q7x9z-head-fghij", "excludeHeadPodFromServeSvc"}, nil},
		{"serve-head-has-cpus", RuleServeHeadHasCPUs, "RayCluster ml/svc-raycluster-q7x9z", []string{"(RayService svc)", "num-cpus 2"}, map[string]string{"numCpus": "2"}},
		{"gcs-ft-off", RuleGCSFTOff, "RayCluster ml/svc-raycluster-q7x9z", []string{"without GCS fault tolerance"}, nil},
	})
}

// wantFinding fails unless findings hold a finding of rule about object (Kind ns/name) whose
// message or remedy contains each of contains and whose evidence has evidence; unique also fails
// when the rule fired twice.
// detailCase is a finding a fixture must produce and what a person acts on in it: its object,
// words of its message and remedy, and its evidence.
type detailCase struct {
	fixture, rule string
	object        string
	contains      []string
	evidence      map[string]string
}

// checkDetails diagnoses each case's fixture and checks its finding.
func checkDetails(t *testing.T, cases []detailCase) {
	for _, c := range cases {
		t.Run(c.fixture+"/"+c.rule, func(t *testing.T) {
			f := loadFixture(t, c.fixture)
			r := Diagnose(&f.snap, DefaultOptions())
			wantFinding(t, r.Findings, c.rule, c.object, c.contains, c.evidence, false)
		})
	}
}

func wantFinding(t *testing.T, findings []Finding, rule, object string, contains []string, evidence map[string]string, unique bool) {
	t.Helper()
	var fd *Finding
	for i := range findings {
		if findings[i].Rule == rule {
			if fd != nil && unique {
				t.Fatalf("two %s findings", rule)
			}
			fd = &findings[i]
		}
	}
	if fd == nil {
		t.Fatalf("no %s finding", rule)
	}
	if obj := fd.Object.Kind + " " + fd.Object.Namespace + "/" + fd.Object.Name; obj != object {
		t.Errorf("object = %q, want %q", obj, object)
	}
	text := fd.Message + " | " + fd.Remedy
	for _, s := range contains {
		if !strings.Contains(text, s) {
			t.Errorf("%q does not contain %q", text, s)
		}
	}
	for k, v := range evidence {
		if fd.Evidence[k] != v {
			t.Errorf("evidence[%s] = %q, want %q", k, fd.Evidence[k], v)
		}
	}
}
