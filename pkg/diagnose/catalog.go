package diagnose

// RuleInfo is everything about a rule except its logic. Findings take their severity from it;
// junit writes one testcase per rule; docs/rules.md has one section per rule, headed
// "## `ID` (severity)", and a fixture under testdata/rules fires it (TestCatalogAgrees checks
// all three).
type RuleInfo struct {
	ID       string
	Severity Severity
	// Scope: "cluster" (every RayCluster), "ray" (every RayCluster whose dashboard doctor asked:
	// doctor --ray), "rayservice" (clusters a RayService owns), "rayjob"
	// (every RayJob, with or without its cluster), "rayservice-object" (every RayService itself,
	// with or without a cluster), "raycronjob" (every RayCronJob, when doctor checks every
	// object), "spec" (every RayCluster, live or read from a file: rules that
	// read only its spec and that of the RayService or RayJob owning it; Options.SpecOnly runs
	// these alone), "admission" (a RayCluster read from a file against the cluster it would be
	// applied to: doctor -f with a cluster, Snapshot.Admission), "operator" (once per report) or
	// "manifest" (a document's text, read by doctor -f: pkg/manifest fires them).
	Scope string
	// Needs is the optional resource the rule reads; when it is in Snapshot.Blind the rule did not run.
	Needs string
	// Summary is what the rule finds, in one line.
	Summary string
	// Anchor is the rule's section in docs/rules.md: docs/rules.md#Anchor.
	Anchor string
}

// Catalog is every rule, in the order reports list them. A new rule is one line here, its ID in
// rules.go, its check in a rules_<area>.go, a fixture under testdata/rules and a section in
// docs/rules.md (docs/contributing.md has the steps); TestCatalogAgrees fails until all agree.
var Catalog = []RuleInfo{
	{RuleHeadEvicted, SeverityError, "cluster", "", "a head pod was evicted and may never be replaced", "head-evicted-error"},
	{RuleHeadTerminated, SeverityError, "cluster", "", "a head pod failed or completed and never runs again", "head-terminated-error"},
	{RuleHeadTerminatingStuck, SeverityError, "cluster", "", "a head pod is stuck Terminating past its grace period", "head-terminating-stuck-error"},
	{RuleHeadPending, SeverityError, "cluster", "", "a head pod is unschedulable or Pending too long", "head-pending-error"},
	{RuleHeadCrashLoop, SeverityError, "cluster", "", "a head container keeps crashing or cannot start", "head-crashloop-error"},
	{RuleHeadMissing, SeverityError, "cluster", "", "a RayCluster has no head pod", "head-missing-error"},
	{RuleHeadDuplicate, SeverityError, "cluster", "", "a RayCluster has more than one head pod", "head-duplicate-error"},
	{RuleHeadRestartDisabled, SeverityWarning, "cluster", "", "the operator will create no new head for a cluster, by design", "head-restart-disabled-warning"},
	{RuleStatusStale, SeverityWarning, "cluster", "", "a RayCluster's status says ready while its head is not", "status-stale-warning"},
	{RuleNodePressure, SeverityWarning, "cluster", "nodes", "a node running Ray pods is under pressure or not ready", "node-pressure-warning"},
	{RuleWorkersNotReady, SeverityWarning, "cluster", "", "workers stay not Ready while the head is Ready", "workers-not-ready-warning"},
	{RuleServeHeadInService, SeverityWarning, "rayservice", "services", "the serve Service sends traffic to the head pod", "serve-head-in-service-warning"},
	{RuleServeHeadHasCPUs, SeverityWarning, "spec", "", "a RayService's head offers CPUs to Serve replicas", "serve-head-has-cpus-warning"},
	{RuleGCSFTOff, SeverityInfo, "spec", "", "a RayService runs without GCS fault tolerance", "gcs-ft-off-info"},
	{RuleOperatorMissing, SeverityWarning, "operator", "deployments", "no ready KubeRay operator was found", "operator-missing-warning"},
	{RuleOperatorOutdated, SeverityWarning, "operator", "deployments", "the KubeRay operator never replaces evicted heads", "operator-outdated-warning"},
	{RuleOperatorNewer, SeverityInfo, "operator", "deployments", "the KubeRay operator is newer than the releases this doctor knows", "operator-newer-info"},
	{RuleHeadStarvedByWorkers, SeverityError, "cluster", "", "a head is unschedulable for lack of resources while its own workers are placed", "head-starved-by-workers-error"},
	{RuleWorkerInitFailing, SeverityWarning, "cluster", "", "a worker's init container keeps failing, so the worker never starts", "worker-init-failing-warning"},
	{RuleHeadRecreateLoop, SeverityError, "cluster", "events", "the head is deleted and recreated over and over", "head-recreate-loop-error"},
	{RuleWorkersStale, SeverityWarning, "cluster", "", "workers left from before a head restart, without GCS fault tolerance", "workers-stale-warning"},
	{RuleRayServiceUpgradeStuck, SeverityWarning, "rayservice", "", "a RayService upgrade's pending cluster never gets a Ready head", "rayservice-upgrade-stuck-warning"},
	{RuleServeNoEndpoints, SeverityError, "rayservice", "endpointslices", "a RayService's serve Service routes to no endpoint or to another cluster", "serve-no-endpoints-error"},
	{RuleGCSFTFinalizerStuck, SeverityError, "cluster", "", "a RayCluster's deletion is held by the Redis cleanup finalizer", "gcs-ft-finalizer-stuck-error"},
	{RuleImagePullFailed, SeverityError, "cluster", "", "a head's or worker's image cannot be pulled", "image-pull-failed-error"},
	{RuleWorkerCrashLoop, SeverityWarning, "cluster", "", "a worker's container keeps crashing or cannot start", "worker-crashloop-warning"},
	{RuleWorkerPending, SeverityWarning, "cluster", "", "workers the scheduler refuses, for longer than PendingTooLong", "worker-pending-warning"},
	{RuleWorkerFailed, SeverityWarning, "cluster", "", "worker pods failed and the operator will not replace them, or is late", "worker-failed-warning"},
	{RuleWorkersMissing, SeverityWarning, "cluster", "", "a worker group is short of pods because the API server refuses the operator's", "workers-missing-warning"},
	{RuleSpecInvalid, SeverityError, "cluster", "events", "the operator refuses a RayCluster's spec and reconciles nothing of it", "spec-invalid-error"},
	{RuleContainerNeverRestarted, SeverityError, "cluster", "", "a container of a live Ray pod failed and its pod will never run it again", "container-never-restarted-error"},
	{RuleWorkersOutsideSpec, SeverityWarning, "cluster", "", "worker pods of a group the spec no longer names, which the operator never manages again", "workers-outside-spec-warning"},
	{RuleBudgetNeverAllows, SeverityWarning, "cluster", "poddisruptionbudgets", "a PodDisruptionBudget over Ray pods can never allow an eviction (maxUnavailable 0, or one the disruption controller cannot compute), so node drains hang", "budget-never-allows-warning"},
	{RuleNetworkPolicyBlocksDNS, SeverityError, "cluster", "networkpolicies", "a NetworkPolicy isolates Ray workers' egress without letting DNS through, so they never reach their head", "network-policy-blocks-dns-error"},
	{RuleGCSStoreUpgradeBlocked, SeverityWarning, "rayservice", "", "a RayService's clusters share one RocksDB GCS store, so its next zero-downtime upgrade never completes", "gcs-store-upgrade-blocked-warning"},
	{RuleGCSStoreShared, SeverityError, "cluster", "", "two live heads keep their GCS in one RocksDB store, which admits one writer: the newer cluster never becomes ready", "gcs-store-shared-error"},
	// A document's text (doctor -f): the manifest reader fires these, with fixtures in
	// pkg/manifest/testdata/rules.
	{RuleManifestUnknownField, SeverityInfo, "manifest", "", "a document sets a field this doctor's KubeRay API does not have: a typo, or a newer operator's field", "manifest-unknown-field-info"},
	{RuleFieldDropped, SeverityWarning, "manifest", "", "a document sets a field the CRD of the KubeRay release that would run it does not have (or ray.io/v1alpha1 never had): kubectl refuses it, other clients lose it", "field-dropped-warning"},
	{RuleManifestStartParamNotString, SeverityError, "manifest", "", "a rayStartParams value is not a string, so the API server refuses the object", "manifest-start-param-not-string-error"},
	{RuleRayServiceNoCluster, SeverityError, "rayservice-object", "", "a RayService has no RayCluster: the API server or the operator refuses it", "rayservice-no-cluster-error"},
	{RuleSuspendNotReached, SeverityError, "rayservice-object", "", "a RayService asks its cluster to run (or to suspend) and the cluster is not, past OperatorGrace", "suspend-not-reached-error"},
	{RuleIncrementalUpgradeBlocked, SeverityError, "rayservice-object", "", "a RayService's incremental upgrade cannot start or move: no Gateway API, or a Gateway or HTTPRoute no controller has made ready", "incremental-upgrade-blocked-error"},
	{RuleRayJobFailed, SeverityError, "rayjob", "rayjobs", "a RayJob failed: its submission, its Ray job, a deadline or its spec", "rayjob-failed-error"},
	{RuleRayJobClusterFailed, SeverityError, "rayjob", "rayjobs", "an Initializing RayJob's RayCluster has failed: the API server refuses its pods, and the RayJob waits until the cause is removed", "rayjob-cluster-failed-error"},
	{RuleRayJobRetryDeletesCluster, SeverityWarning, "rayjob", "rayjobs", "a RayJob borrowing a RayCluster (clusterSelector) may be retried, and KubeRay v1.5 retries by deleting that cluster", "rayjob-retry-deletes-cluster-warning"},
	{RuleRayJobInitializing, SeverityWarning, "rayjob", "rayjobs", "a RayJob waits in Initializing for its RayCluster, longer than RayJobInitializingTooLong", "rayjob-initializing-warning"},
	{RuleRayJobSubmitterFailing, SeverityWarning, "rayjob", "rayjobs", "a Running RayJob's submitter pod cannot start, crash-loops, is unschedulable or its attempts fail", "rayjob-submitter-failing-warning"},
	{RuleRayJobStatusCheckFailing, SeverityWarning, "rayjob", "rayjobs", "the operator cannot read a running RayJob's status from the dashboard, and fails it when KubeRay v1.7.0's timeout passes", "rayjob-status-check-failing-warning"},
	{RuleRayCronJobNotScheduling, SeverityError, "raycronjob", "raycronjobs", "a RayCronJob's tick passed and the operator made no RayJob for it, or never will", "raycronjob-not-scheduling-error"},
	{RuleRayJobFinishedHolds, SeverityInfo, "rayjob", "rayjobs", "a finished RayJob's RayCluster still holds its pods", "rayjob-finished-holding-info"},
	// The spec alone (live clusters and doctor -f): these also run under Options.SpecOnly.
	{RuleSpecRefused, SeverityError, "spec", "", "the KubeRay operator's own validation refuses a document read by doctor -f, in its Event's words", "spec-refused-error"},
	{RuleHeadEvictableFirst, SeverityInfo, "spec", "", "a head ranks first for eviction under node pressure: no ephemeral-storage request, or less QoS than its workers", "head-evictable-first-info"},
	{RuleMemoryRequestNotLimit, SeverityInfo, "spec", "", "a Ray container requests memory unequal to its limit, the memory KubeRay tells Ray", "memory-request-not-limit-info"},
	{RuleRayContainerNotFirst, SeverityWarning, "spec", "", "a group's first container is not its Ray container, and KubeRay runs Ray in the first", "ray-container-not-first-warning"},
	{RuleRayResourcesBuiltin, SeverityError, "spec", "", "rayStartParams.resources names CPU, GPU or memory, which ray start refuses", "ray-resources-builtin-error"},
	{RuleImageRayVersion, SeverityInfo, "spec", "", "a group's Ray image names another Ray version than spec.rayVersion", "image-ray-version-info"},
	{RuleServeHeadNotExcluded, SeverityInfo, "spec", "", "a RayService does not set excludeHeadPodFromServeSvc, so its head takes Serve traffic", "serve-head-not-excluded-info"},
	{RuleServeConfigInvalid, SeverityError, "spec", "", "a RayService's serveConfigV2 is not YAML", "serve-config-invalid-error"},
	{RuleServeReplicaFitsNoGroup, SeverityError, "spec", "", "a Serve deployment asks per replica for more CPU, GPU, memory or a custom resource than any group of its RayCluster advertises to Ray", "serve-replica-fits-no-group-error"},
	{RuleServeConfigCamelCase, SeverityWarning, "spec", "", "a RayService's serveConfigV2 names Serve fields in camelCase where Serve reads snake_case", "serve-config-camelcase-warning"},
	{RuleGCSReconnectTimeout, SeverityWarning, "spec", "", "with GCS fault tolerance, workers give up on a lost GCS no later than the head", "gcs-reconnect-timeout-warning"},
	{RuleShmSmallerThanObjectStore, SeverityInfo, "spec", "", "a group's sized /dev/shm is smaller than the object store Ray would put there", "shm-smaller-than-object-store-info"},
	{RulePodResourcesInvalid, SeverityError, "spec", "", "a group's container resources are ones the API server refuses in every pod (a GPU request unequal to its limit, say)", "pod-resources-invalid-error"},
	// Against the cluster it would be applied to (doctor -f with a cluster): Snapshot.Admission.
	{RuleHeadAdmissionRefused, SeverityError, "admission", "resourcequotas", "the namespace's ResourceQuota or LimitRange would refuse the head pod", "head-admission-refused-error"},
	{RuleExistsInCluster, SeverityInfo, "admission", "", "a document names a Ray object that exists: what an apply changes, and what the admission rules judge of it", "exists-in-cluster-info"},
	{RuleWorkersAdmissionRefused, SeverityWarning, "admission", "resourcequotas", "the namespace's ResourceQuota or LimitRange would refuse worker pods once the head is admitted", "workers-admission-refused-warning"},
	{RuleHeadFitsNoNode, SeverityWarning, "admission", "nodes", "no node could hold the head: allocatable, taints, node selector or affinity", "head-fits-no-node-warning"},
	// Ray's own view (doctor --ray): these run only on clusters whose dashboard was asked.
	{RuleRayDashboardUnreachable, SeverityWarning, "ray", "", "doctor --ray could not read a head's dashboard, so nothing is known of Ray's health", "ray-dashboard-unreachable-warning"},
	{RuleRayDashboardAuth, SeverityWarning, "ray", "", "the head's Ray asks for a token doctor could not present, so nothing is known of Ray's health", "ray-dashboard-auth-warning"},
	{RuleRayGCSUnhealthy, SeverityError, "ray", "", "Ray's GCS health check fails while the head pod may be Running", "ray-gcs-unhealthy-error"},
	{RuleRayNodeDead, SeverityWarning, "ray", "", "Ray has marked the node of a Running pod DEAD", "ray-node-dead-warning"},
	{RuleRayPodUnregistered, SeverityWarning, "ray", "", "a Running and Ready pod never joined Ray's node table", "ray-pod-unregistered-warning"},
	{RuleRayVersionMismatch, SeverityWarning, "ray", "", "the head's Ray version differs from spec.rayVersion or a worker's image", "ray-version-mismatch-warning"},
	{RuleServeAppFailed, SeverityError, "ray", "", "a Serve application is DEPLOY_FAILED or UNHEALTHY, in Ray's words", "serve-app-failed-error"},
	{RuleServeAppDeploying, SeverityWarning, "ray", "", "a Serve application has been DEPLOYING longer than ServeDeployingTooLong", "serve-app-deploying-warning"},
	{RuleRayJobFailedInRay, SeverityWarning, "ray", "", "Ray's job table says a RayJob's Ray job FAILED or STOPPED, with Ray's error type and message", "ray-job-failed-warning"},
	{RuleRayDemandInfeasible, SeverityWarning, "ray", "", "Ray's autoscaler has requests waiting that no group of the cluster can ever provide", "ray-demand-infeasible-warning"},
}

// severities is Catalog's severity by rule ID.
var severities = func() map[string]Severity {
	m := make(map[string]Severity, len(Catalog))
	for _, r := range Catalog {
		m[r.ID] = r.Severity
	}
	return m
}()

// severityOf is the rule's severity from Catalog. A rule missing from Catalog gets none, and
// TestRuleFixtures fails on its fixture.
func severityOf(rule string) Severity {
	return severities[rule]
}

// RuleOf is the catalog entry of rule id.
func RuleOf(id string) (RuleInfo, bool) {
	for _, r := range Catalog {
		if r.ID == id {
			return r, true
		}
	}
	return RuleInfo{}, false
}
