package e2e

import (
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// TestTrackerCorpus rebuilds states users reported to KubeRay's tracker in 2025 and 2026, each
// with the real operator of its report's era, and holds doctor to the verdict the thread reached
// (the cause its maintainers or reporter confirmed), not to what the rules happened to say. The
// table in docs/corpus.md lists each case: issue, era, pasted state, cause, expected verdict.
// kuberay #4686 is the matrix's rayservice-unsuspend case (every version). What a kubelet or Ray
// would do is played through the API and named in each case; the rest is the real API server,
// controllers and operator. About 90 s, the cases in parallel.
func TestTrackerCorpus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		sb   func(*testing.T) *sandbox.Sandbox
		run  func(*testing.T, *H)
	}{
		{"kuberay4945-sidecar-submitter-exited", sandboxV160, corpusSidecarSubmitterExited},
		{"kuberay3980-rayjob-name-too-long", sandboxV150, corpusRayJobNameTooLong},
		{"kuberay4045-rayservice-name-too-long", sandboxV160, corpusRayServiceNameTooLong},
		{"kuberay4974-min-replicas-above-max", sandboxV160, corpusMinAboveMax},
		{"kuberay4637-init-container-loop", sandboxV160, corpusInitContainerLoop},
		{"kuberay4540-multihost-quota", sandboxV160, corpusMultiHostQuota},
		{"kuberay5184-deletion-rules-unmatched", sandboxV160, corpusDeletionRulesUnmatched},
		{"kuberay3467-serve-worker-without-replica", sandboxV150, corpusServeWorkerWithoutReplica},
		{"kuberay4516-retry-deletes-borrowed-cluster", sandboxV150, corpusRetryDeletesBorrowedCluster},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHOn(t, c.sb(t)))
		})
	}
}

// kuberay #4945 (v1.6.x): a SidecarMode RayJob whose submitter container fails before its
// RayCluster is ready. The head's restartPolicy is Never, so the exited submitter keeps the head
// not Ready for good and the RayJob waits in Initializing forever. Here a worker nobody can place
// (a node selector no node has) keeps the cluster from becoming ready, the real operator of v1.6.0
// builds the head with the submitter container, and the kubelet's report that the submitter
// exited 1 is played. Expected: the exited container is named as what holds the RayJob, not the
// pending worker.
func corpusSidecarSubmitterExited(t *testing.T, h *H) {
	h.createRayJob("sc", func(j *rayv1.RayJob) {
		j.Spec.SubmissionMode = rayv1.SidecarMode
		unplaceable(j.Spec.RayClusterSpec)
	})
	st := h.waitRayJob("sc", "Initializing with its RayCluster", 60*time.Second, func(s rayv1.RayJobStatus) bool {
		return s.JobDeploymentStatus == rayv1.JobDeploymentStatusInitializing && s.RayClusterName != ""
	})
	head := h.waitHeadRunning(st.RayClusterName)
	submitter := ""
	for _, c := range head.Spec.Containers[1:] {
		submitter = c.Name
	}
	if submitter == "" || head.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Fatalf("v1.6.0 should build the head with a submitter container and restartPolicy Never: %v %s", head.Spec.Containers, head.Spec.RestartPolicy)
	}
	h.kubeletContainerExited(head.Name, submitter, 1)
	time.Sleep(2 * time.Second) // past the thresholds below (1s)
	d, res := h.doctorJSON("--rayjob-initializing-too-long", "1s", "--pending-too-long", "1s")
	f := d.finding(t, st.RayClusterName, "container-never-restarted")
	wantContains(t, "the finding", f.Message, "container "+submitter+" of head pod "+head.Name, "exited with code 1")
	j := d.finding(t, st.RayClusterName, "rayjob-initializing")
	wantContains(t, "the RayJob's finding", j.Message, "container-never-restarted")
	if res.Code != 1 {
		t.Errorf("want exit 1, got %s", res)
	}
}

// kuberay #3980 (v1.4.2; fixed in v1.5.0): a RayJob whose name is longer than 47 characters kept
// retrying with no status. v1.5.0 fails it: ValidationFailed, "RayJob name should be no more
// than 47 characters". Nothing is played. Expected: the RayJob failed validation for its name's
// length, and the fix is a shorter name.
func corpusRayJobNameTooLong(t *testing.T, h *H) {
	name := "rayjob-sample-" + strings.Repeat("a", 34) // 48 characters
	h.createRayJob(name, nil)
	h.waitRayJob(name, "ValidationFailed", 60*time.Second, func(s rayv1.RayJobStatus) bool {
		return s.JobDeploymentStatus == rayv1.JobDeploymentStatusValidationFailed
	})
	d, res := h.doctorJSON()
	f := d.finding(t, "", "rayjob-failed")
	wantContains(t, "the finding", f.Message, "RayJob "+h.NS+"/"+name+" ValidationFailed: the operator refused its spec", "no more than 47 characters")
	wantContains(t, "the remedy", f.Remedy, "fix the spec and create the RayJob again")
	if f.Severity != "error" || res.Code != 1 {
		t.Errorf("severity %s, exit %d\n%s", f.Severity, res.Code, res)
	}
}

// kuberay #4045 (2025; fixed in v1.6.0): a RayService whose name is longer than 47 characters was
// requeued for ever. v1.6.0 refuses it: a Warning Event and Ready=False ValidationFailed, and no
// RayCluster. Nothing is played. Expected: the RayService has no cluster because its name is too
// long; rename it.
func corpusRayServiceNameTooLong(t *testing.T, h *H) {
	name := "rayservice-sample-" + strings.Repeat("a", 30) // 48 characters
	spec := h.sampleCluster("x").Spec
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.NS}, Spec: rayv1.RayServiceSpec{RayClusterSpec: spec}}
	if _, err := h.Ray.RayV1().RayServices(h.NS).Create(h.Ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the operator's refusal of the RayService", 60*time.Second, func() (bool, error) {
		got, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
		return err == nil && len(got.Status.Conditions) > 0, err
	})
	time.Sleep(2 * time.Second) // past --operator-grace (1s)
	d, res := h.doctorJSON("--operator-grace", "1s")
	f := d.finding(t, "", "rayservice-no-cluster")
	wantContains(t, "the finding", f.Message, "RayService "+h.NS+"/"+name+" has no RayCluster", "no more than 47 characters")
	if f.Severity != "error" || res.Code != 1 {
		t.Errorf("severity %s, exit %d\n%s", f.Severity, res.Code, res)
	}
}

// kuberay #4974 (v1.6.0): a RayCluster with a worker group's minReplicas above its maxReplicas.
// v1.6.0 refuses the spec in a Warning Event only (InvalidRayClusterSpec) and reconciles nothing:
// no pod, and observedGeneration stays behind. Nothing is played. Expected: the spec is invalid
// (minReplicas > maxReplicas) and nothing was made of it; set minReplicas ≤ maxReplicas.
func corpusMinAboveMax(t *testing.T, h *H) {
	rc := h.sampleCluster("mm")
	g := &rc.Spec.WorkerGroupSpecs[0]
	g.MinReplicas, g.MaxReplicas, g.Replicas = ptr.To[int32](3), ptr.To[int32](2), ptr.To[int32](2)
	if _, err := h.Ray.RayV1().RayClusters(h.NS).Create(h.Ctx, rc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitOperatorWarning("mm", "InvalidRayClusterSpec")
	time.Sleep(2 * time.Second) // past --operator-grace (1s)
	d, res := h.doctorJSON("--operator-grace", "1s")
	f := d.finding(t, "mm", "spec-invalid")
	wantContains(t, "the finding", f.Message, "the operator refuses its spec and reconciles nothing of it", "minReplicas", "maxReplicas")
	if got := d.rules("mm"); len(got) != 1 || res.Code != 1 {
		t.Errorf("findings %v (want spec-invalid alone), exit %d\n%s", got, res.Code, res)
	}
}

// kuberay #4637 (v1.6.0): a RayJob whose head has an init container that fails every time, under
// restartPolicy Never: the operator deletes the Failed head and makes another, about every 2 s,
// and the RayJob waits in Initializing for ever. The kubelet's part is played: each new head's
// init container exits 42 and the pod is Failed. Expected: the head is recreated in a loop because
// its init container fails (exit 42); fix the init container. A worker nobody can place keeps the
// cluster from becoming ready before the loop starts (kwok would make every pod Ready at once).
func corpusInitContainerLoop(t *testing.T, h *H) {
	h.createRayJob("ic", func(j *rayv1.RayJob) {
		spec := &j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec
		spec.RestartPolicy = corev1.RestartPolicyNever
		spec.InitContainers = append(spec.InitContainers, corev1.Container{Name: "setup", Image: spec.Containers[0].Image, Command: []string{"sh", "-c", "exit 42"}})
		unplaceable(j.Spec.RayClusterSpec)
	})
	st := h.waitRayJob("ic", "Initializing with its RayCluster", 60*time.Second, func(s rayv1.RayJobStatus) bool {
		return s.JobDeploymentStatus == rayv1.JobDeploymentStatusInitializing && s.RayClusterName != ""
	})
	cluster := st.RayClusterName
	head := h.waitHeadRunning(cluster)
	for i := 0; i < 3; i++ {
		h.kubeletInitFailed(head.Name, "setup", 42)
		head = h.waitNewHead(cluster, head.Name, 60*time.Second)
	}
	time.Sleep(2 * time.Second) // past --rayjob-initializing-too-long (1s)
	d, res := h.doctorJSON("--rayjob-initializing-too-long", "1s")
	f := d.finding(t, cluster, "head-recreate-loop")
	// The deleted heads' init container exits are gone with them (the operator's Events quote the
	// Ray container only), so the loop is named, not exit 42: the remedy sends the user to the
	// Events and the head's configuration.
	wantContains(t, "the finding", f.Message, "deleted and recreated 3 times")
	j := d.finding(t, cluster, "rayjob-initializing")
	wantContains(t, "the RayJob's finding", j.Message, "head-recreate-loop")
	if res.Code != 1 {
		t.Errorf("want exit 1, got %s", res)
	}
}

// kuberay #4540 (v1.6.0): a worker group with numOfHosts above 1 under a ResourceQuota that admits only
// part of a replica: the operator creates one host, the API server refuses the other, and the
// operator deletes the incomplete replica to keep it whole, again and again. Nothing is played:
// the real quota admission and the real operator (RayMultiHostIndexing is on by default in
// v1.6.0). Expected: the quota refuses part of each multi-host replica; raise the quota or lower
// replicas × numOfHosts.
func corpusMultiHostQuota(t *testing.T, h *H) {
	// Four hosts a replica under a quota of two pods: the head and one host are admitted. The
	// quota controller's recount may let one more pod in while the operator deletes and creates
	// (a known window of quota admission); a replica of four stays incomplete all the same.
	h.podQuota("two-pods", 2)
	h.CreateRayCluster("mh", func(rc *rayv1.RayCluster) {
		g := &rc.Spec.WorkerGroupSpecs[0]
		g.NumOfHosts = 4
		g.Replicas, g.MinReplicas, g.MaxReplicas = ptr.To[int32](1), ptr.To[int32](1), ptr.To[int32](1)
	})
	h.waitHeadRunning("mh")
	h.waitOperatorWarning("mh", "FailedToCreateWorkerPod")
	time.Sleep(2 * time.Second) // past --operator-grace (1s)
	var f *drFinding
	// The operator deletes and recreates the replica's hosts in a loop: a snapshot taken between
	// a delete and a create may see the group short with no refusal recorded yet; the next shows it.
	h.WaitFor("doctor to report the refused hosts", 30*time.Second, func() (bool, error) {
		d, _ := h.doctorJSON("--operator-grace", "1s")
		for i := range d.Findings {
			if d.Findings[i].Rule == "workers-missing" && d.Findings[i].Cluster != nil && d.Findings[i].Cluster.Name == "mh" {
				f = &d.Findings[i]
				return true, nil
			}
		}
		return false, nil
	})
	wantContains(t, "the finding", f.Message, "worker group small-group has", "of 4 pods", "exceeded quota: two-pods")
	wantContains(t, "the remedy", f.Remedy, "the ResourceQuota two-pods is used up")
}

// kuberay #5184 and #4233 (v1.6.0): a RayJob with deletionRules keyed on jobStatus fails on its
// activeDeadlineSeconds before Ray ever reported a jobStatus; KubeRay matches rules exactly, none
// matches an empty jobStatus, and its RayCluster stays for good. The real operator of v1.6.0 runs
// it (kwok runs the pods; no dashboard answers, so no jobStatus ever comes, as in the report).
// Expected: the finished RayJob's cluster is left because no deletion rule can match; add a rule
// on jobDeploymentStatus.
func corpusDeletionRulesUnmatched(t *testing.T, h *H) {
	deadline := int32(15)
	h.createRayJob("dr", func(j *rayv1.RayJob) {
		j.Spec.ActiveDeadlineSeconds = &deadline
		j.Spec.DeletionStrategy = &rayv1.DeletionStrategy{DeletionRules: []rayv1.DeletionRule{
			{Policy: rayv1.DeleteCluster, Condition: rayv1.DeletionCondition{JobStatus: ptr.To(rayv1.JobStatusFailed)}},
			{Policy: rayv1.DeleteCluster, Condition: rayv1.DeletionCondition{JobStatus: ptr.To(rayv1.JobStatusSucceeded)}},
		}}
	})
	st := h.waitRayJob("dr", "Failed", 90*time.Second, func(s rayv1.RayJobStatus) bool {
		return s.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed
	})
	if st.JobStatus != "" {
		t.Fatalf("the RayJob failed with jobStatus %q; the case needs it empty", st.JobStatus)
	}
	time.Sleep(3 * time.Second) // the operator's deletion rules, processed
	d, res := h.doctorJSON("--operator-grace", "1s")
	f := d.finding(t, st.RayClusterName, "rayjob-finished-holding")
	wantContains(t, "the finding", f.Message, "its deletionRules fire on jobStatus FAILED, SUCCEEDED only", `its jobStatus is ""`, "kuberay #5184")
	wantContains(t, "the remedy", f.Remedy, "jobDeploymentStatus: Failed")
	if _, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, st.RayClusterName, metav1.GetOptions{}); err != nil {
		t.Errorf("v1.6.0 should leave the cluster: %v", err)
	}
	_ = res
}

// kuberay #3467, #3133 (2025): a RayService whose Serve application runs, with a worker that stays
// not Ready: KubeRay gives a RayService's workers a readiness probe on the Serve proxy, which a
// node without a Serve replica fails by design. The real operator of v1.5.0 runs the RayService
// against the Ray stand-ins (test/play StartRay); the kubelet's readiness verdict on the second
// worker is played. Expected: nothing is wrong; doctor stays silent about the worker.
func corpusServeWorkerWithoutReplica(t *testing.T, h *H) {
	startRay(h, play.RayOptions{DeployTime: time.Second})
	cluster := h.createLiveRayService("rs", sandbox.OperatorV150, func(rs *rayv1.RayService) {
		rs.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0"}
		rs.Spec.RayClusterSpec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](2)
		rs.Spec.RayClusterSpec.WorkerGroupSpecs[0].MinReplicas = ptr.To[int32](2)
	})
	h.WaitFor("two workers of "+cluster, 60*time.Second, func() (bool, error) { return len(h.Pods(cluster, "worker")) == 2, nil })
	idle := h.Pods(cluster, "worker")[1]
	h.kubeletNotReady(idle.Name)
	time.Sleep(2 * time.Second) // past --workers-not-ready-window (1s)
	d, res := h.doctorJSON("--workers-not-ready-window", "1s")
	for _, r := range d.rules(cluster) {
		if strings.HasPrefix(r, "workers-not-ready") {
			t.Errorf("workers-not-ready on a worker without a Serve replica, not Ready by design: %v\n%s", d.rules(cluster), res)
		}
	}
}

// unplaceable gives the cluster's first worker group a node selector no node has: its workers
// stay Pending, so the cluster never becomes ready and its RayJob stays Initializing.
func unplaceable(spec *rayv1.RayClusterSpec) {
	spec.WorkerGroupSpecs[0].Template.Spec.NodeSelector = map[string]string{"corpus.kubectl-ray.io/none": "true"}
}

// waitHeadRunning waits for the cluster's head pod to run, and returns it.
func (h *H) waitHeadRunning(cluster string) corev1.Pod {
	h.T.Helper()
	var head corev1.Pod
	h.WaitFor("the head of "+cluster+" Running", 90*time.Second, func() (bool, error) {
		for _, p := range h.Pods(cluster, "head") {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				head = p
				return true, nil
			}
		}
		return false, nil
	})
	return head
}

// kuberay #4516 (2026-02; v1.5.0): a RayJob that borrows a RayCluster (clusterSelector) with
// backoffLimit 1. Its submitter fails once, and v1.5.0 retries it through Retrying, which deletes
// the RayCluster its status names: the borrowed one. The kubelet's part is played (every Job pod's
// container exits 1, test/play); the Job controller and the operator are real. Expected: before
// anything fails, doctor says that a retry would delete the borrowed cluster, and how to avoid
// it; the operator then does delete it, as the report says.
func corpusRetryDeletesBorrowedCluster(t *testing.T, h *H) {
	h.CreateRayCluster("shared", nil)
	h.WaitClusterRunning("shared", 90*time.Second)
	h.waitProvisioned("shared", kubeRayVersion{version: "v1.5.0"})
	h.createRayJob("adhoc", func(j *rayv1.RayJob) {
		j.Spec.RayClusterSpec = nil
		j.Spec.ClusterSelector = map[string]string{"ray.io/cluster": "shared"}
		j.Spec.BackoffLimit = ptr.To[int32](1)
		j.Spec.SubmitterConfig = &rayv1.SubmitterConfig{BackoffLimit: ptr.To[int32](0)}
	})
	h.waitRayJob("adhoc", "on cluster shared", 60*time.Second, func(s rayv1.RayJobStatus) bool { return s.RayClusterName == "shared" })
	d, res := h.doctorJSON()
	f := d.finding(t, "shared", "rayjob-retry-deletes-cluster")
	wantContains(t, "the finding", f.Message, "RayJob "+h.NS+"/adhoc borrows RayCluster shared", "KubeRay v1.5.0 retries a failed RayJob by deleting", "kuberay #4516")
	wantContains(t, "the remedy", f.Remedy, "backoffLimit", "v1.6.0")
	if f.Severity != "warning" || res.Code != 0 {
		t.Errorf("a warning: severity %s, exit %d\n%s", f.Severity, res.Code, res)
	}
	h.jobPodsExit1()
	h.WaitFor("v1.5.0 to delete the borrowed cluster on retry (kuberay #4516)", 90*time.Second, func() (bool, error) {
		rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, "shared", metav1.GetOptions{})
		return err != nil || rc.DeletionTimestamp != nil, nil
	})
}
