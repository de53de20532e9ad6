package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// podQuota puts a ResourceQuota of n pods in the test's namespace (see quota).
func (h *H) podQuota(name string, n int) {
	h.T.Helper()
	h.quota(name, corev1.ResourcePods, *resource.NewQuantity(int64(n), resource.DecimalSI))
}

// quota puts a ResourceQuota of hard of what (pods, memory, or an object count such as
// count/rayclusters.ray.io) in the test's namespace, enforced by the sandbox's real
// kube-apiserver, and waits for the quota controller's status (until then admission refuses
// every such object).
func (h *H) quota(name string, what corev1.ResourceName, hard resource.Quantity) {
	h.T.Helper()
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.NS},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{what: hard}}}
	// The API server's admission refuses with "status unknown for quota" until the quota
	// controller has counted the resource (status.used). It counts an object count of a custom
	// resource only once its discovery (every 30 s) found the resource, and a quota made before
	// that waits for the next full resync (5 min): such a quota is made again until it is counted.
	created := time.Time{}
	h.WaitFor("the quota's status", 90*time.Second, func() (bool, error) {
		if created.IsZero() || time.Since(created) > 15*time.Second {
			err := h.Kube.CoreV1().ResourceQuotas(h.NS).Delete(h.Ctx, name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
			if _, err := h.Kube.CoreV1().ResourceQuotas(h.NS).Create(h.Ctx, q.DeepCopy(), metav1.CreateOptions{}); err != nil {
				return false, err
			}
			created = time.Now()
		}
		got, err := h.Kube.CoreV1().ResourceQuotas(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, limited := got.Status.Hard[what] // Pods() is never nil: it says 0 when absent
		_, counted := got.Status.Used[what]
		return limited && counted, nil
	})
}

// createRayJob creates RayJob name running the sample cluster, changed by mutate. The real
// operator of the sandbox makes its RayCluster and, in K8sJobMode, its submitter Job.
func (h *H) createRayJob(name string, mutate func(*rayv1.RayJob)) {
	h.T.Helper()
	spec := h.sampleCluster(name).Spec
	j := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.NS},
		Spec: rayv1.RayJobSpec{Entrypoint: "python -c 'print(1)'", RayClusterSpec: &spec}}
	if mutate != nil {
		mutate(j)
	}
	if _, err := h.Ray.RayV1().RayJobs(h.NS).Create(h.Ctx, j, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
}

// waitRayJob waits until the RayJob's status satisfies cond, and returns it.
func (h *H) waitRayJob(name, what string, timeout time.Duration, cond func(rayv1.RayJobStatus) bool) rayv1.RayJobStatus {
	h.T.Helper()
	var st rayv1.RayJobStatus
	h.WaitFor("RayJob "+name+" "+what, timeout, func() (bool, error) {
		j, err := h.Ray.RayV1().RayJobs(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		st = j.Status
		return cond(st), nil
	})
	return st
}

// jobPodsExit1 plays, for the test's namespace until it ends, a kubelet on which every Job pod's
// container exits 1 (play.KubeletJobPodsFail).
func (h *H) jobPodsExit1() {
	h.T.Helper()
	remove, err := play.KubeletJobPodsFail(h.Ctx, h.SB.Admin, h.NS, 1)
	if err != nil {
		h.T.Fatal(err)
	}
	h.T.Cleanup(func() {
		if err := remove(context.Background()); err != nil {
			h.T.Error(err)
		}
	})
}

// rayjob-deadline: a quota of no pods refuses the head of the RayJob's cluster, so the RayJob
// waits in Initializing until its activeDeadlineSeconds (20 s) fail it. Nothing is played: the
// real quota admission refuses, the real operator of each version reports. doctor says first
// that the RayJob waits on a failed cluster (rayjob-cluster-failed, with the quota), then that
// it failed.
func matrixRayJobDeadline(t *testing.T, h *H, v kubeRayVersion) {
	h.podQuota("no-pods", 0)
	deadline := int32(20)
	h.createRayJob("dl", func(j *rayv1.RayJob) { j.Spec.ActiveDeadlineSeconds = &deadline })
	st := h.waitRayJob("dl", "Initializing with its RayCluster", 60*time.Second, func(s rayv1.RayJobStatus) bool {
		return s.JobDeploymentStatus == rayv1.JobDeploymentStatusInitializing && s.StartTime != nil && s.RayClusterName != ""
	})
	cluster := st.RayClusterName
	h.waitRefusalRecorded(cluster, "no-pods", "FailedCreateHeadPod", v)
	time.Sleep(2 * time.Second) // past --operator-grace and --rayjob-initializing-too-long (1s)
	d, res := h.doctorJSON("--operator-grace", "1s", "--rayjob-initializing-too-long", "1s")
	// The cluster's status records the refusal: the RayJob waits on a failed cluster, an error.
	f := d.finding(t, cluster, "rayjob-cluster-failed")
	wantContains(t, "message", f.Message, "RayJob "+h.NS+"/dl has been Initializing for", "its RayCluster "+cluster+" has failed: the API server refuses its head pod",
		"exceeded quota: no-pods")
	wantContains(t, "remedy", f.Remedy, "the ResourceQuota no-pods is used up")
	if f.RayJob == nil || f.RayJob.Name != "dl" || f.Severity != "error" || res.Code != 1 {
		t.Errorf("rayJob %+v, severity %s, exit %d\n%s", f.RayJob, f.Severity, res.Code, res)
	}
	if got := d.rules(cluster); strings.Contains(strings.Join(got, ","), "rayjob-initializing") {
		t.Errorf("rayjob-initializing beside rayjob-cluster-failed: %v", got)
	}

	st = h.waitRayJob("dl", "Failed with DeadlineExceeded", 90*time.Second, func(s rayv1.RayJobStatus) bool {
		return s.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed
	})
	if st.Reason != rayv1.DeadlineExceeded {
		t.Fatalf("KubeRay %s failed the RayJob with %q (%s), want DeadlineExceeded", v.version, st.Reason, st.Message)
	}
	d, res = h.doctorJSON("--operator-grace", "1s")
	f = d.finding(t, cluster, "rayjob-failed")
	wantContains(t, "message", f.Message, "RayJob "+h.NS+"/dl Failed", "it ran past spec.activeDeadlineSeconds (20s): The RayJob has passed the activeDeadlineSeconds")
	var rj *struct{ health, status string }
	for _, j := range d.RayJobs {
		if j.Name == "dl" {
			rj = &struct{ health, status string }{j.Health, j.JobDeploymentStatus}
		}
	}
	if rj == nil || rj.health != "error" || rj.status != "Failed" || f.Severity != "error" || res.Code != 1 {
		t.Errorf("rayJobs entry %+v, severity %s, exit %d\n%s", rj, f.Severity, res.Code, res)
	}
}

// rayjob-submission: the submitter Job of a K8sJobMode RayJob (submitterConfig.backoffLimit 0)
// fails once: the kubelet's part is played (a kwok Stage: its container exits 1; kwok alone would
// complete it), the real Job controller marks the Job failed (BackoffLimitExceeded) and the real
// operator fails the RayJob with SubmissionFailed. doctor says so and where the log is, and that
// the finished RayJob's cluster still runs; through kubectl's plugin discovery, `kubectl ray
// doctor rayjob/sub` shows the RayJob's findings.
func matrixRayJobSubmission(t *testing.T, h *H, v kubeRayVersion) {
	h.jobPodsExit1()
	zero := int32(0)
	h.createRayJob("sub", func(j *rayv1.RayJob) { j.Spec.SubmitterConfig = &rayv1.SubmitterConfig{BackoffLimit: &zero} })
	st := h.waitRayJob("sub", "Failed", 90*time.Second, func(s rayv1.RayJobStatus) bool {
		return s.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed
	})
	if st.Reason != rayv1.SubmissionFailed {
		t.Fatalf("KubeRay %s failed the RayJob with %q (%s), want SubmissionFailed", v.version, st.Reason, st.Message)
	}
	d, res := h.doctorJSON()
	f := d.finding(t, st.RayClusterName, "rayjob-failed")
	wantContains(t, "message", f.Message, "RayJob "+h.NS+"/sub Failed", "its submitter could not submit the Ray job: Job submission has failed", "BackoffLimitExceeded")
	wantContains(t, "remedy", f.Remedy, "kubectl logs job/sub -n "+h.NS)
	hold := d.finding(t, st.RayClusterName, "rayjob-finished-holding")
	wantContains(t, "message", hold.Message, "and its RayCluster "+st.RayClusterName+" still runs", "neither shutdownAfterJobFinishes nor a deletionStrategy is set")
	if res.Code != 1 || hold.Severity != "info" {
		t.Errorf("doctor exit %d, holding severity %s\n%s", res.Code, hold.Severity, res)
	}
	if got := d.rules(st.RayClusterName); len(got) != 2 {
		t.Errorf("findings about the RayJob's cluster: %v, want only the two RayJob findings", got)
	}

	// A rayJob: entry accepts the failure: the run passes and still reports it, apart.
	acc := filepath.Join(t.TempDir(), "accept.yaml")
	if err := os.WriteFile(acc, []byte("apiVersion: kubectl-ray.io/v1alpha1\nkind: AcceptedFindings\naccept:\n- rules: [rayjob-failed]\n  rayJob: "+
		h.NS+"/sub\n  reason: kept for the postmortem\n  expires: 2099-01-01\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if a := h.Run("doctor", "--accept", acc); a.Code != 0 || !strings.Contains(a.Stdout, "Accepted (reported, not counted toward --fail-on)") ||
		!strings.Contains(a.Stdout, "1 RayJob: 1 healthy") {
		t.Errorf("doctor --accept with a rayJob: entry:\n%s", a)
	}

	k := h.Kubectl("ray", "doctor", "rayjob/sub", "-n", h.NS, "--kubeconfig", h.SB.Kubeconfig())
	if k.Code != 1 || !strings.Contains(k.Stdout, "RayJob "+h.NS+"/sub (RayCluster "+st.RayClusterName+"): error") ||
		!strings.Contains(k.Stdout, "rayjob-failed") || !strings.Contains(k.Stdout, "1 RayJob: 0 healthy, 1 with errors") {
		t.Errorf("kubectl ray doctor rayjob/sub:\n%s", k)
	}
}

// TestRayJobHealthyLive: the healthy RayJob variants are silent, on each operator version: one
// running, then the same one succeeded with its cluster deleted (shutdownAfterJobFinishes,
// ttlSecondsAfterFinished 0). The RayJob and RayCluster controllers are real; Ray's part is played
// by the head's dashboard stand-in (PlayDashboardJobsAPI, PlayJobsRun), which the operator reaches
// through the sandbox's pod network. In HTTPMode the operator submits the Ray job through that API
// itself and reads its status there, as it does in K8sJobMode after `ray job submit` (which no
// kwok pod runs).
func TestRayJobHealthyLive(t *testing.T) {
	t.Parallel()
	for _, v := range liveSandboxes {
		t.Run(strings.ReplaceAll(v.version, ".", ""), func(t *testing.T) {
			t.Parallel()
			testRayJobHealthy(t, newHOn(t, v.sb(t)), v.version)
		})
	}
}

func testRayJobHealthy(t *testing.T, h *H, version string) {
	startRay(h, play.RayOptions{JobRunTime: 40 * time.Second})
	h.createRayJob("ok", func(j *rayv1.RayJob) {
		j.Spec.SubmissionMode = rayv1.HTTPMode
		j.Spec.ShutdownAfterJobFinishes = true
	})
	st := h.waitRayJob("ok", "Running, its Ray job RUNNING", 90*time.Second, func(s rayv1.RayJobStatus) bool {
		return s.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning && s.JobStatus == rayv1.JobStatusRunning
	})
	cluster := st.RayClusterName
	silentOnRayJob(t, h, "ok", cluster, "Running")

	st = h.waitRayJob("ok", "Complete", 90*time.Second, func(s rayv1.RayJobStatus) bool {
		return s.JobDeploymentStatus == rayv1.JobDeploymentStatusComplete
	})
	if st.JobStatus != rayv1.JobStatusSucceeded {
		t.Fatalf("KubeRay %s completed the RayJob with job status %q (%s)", version, st.JobStatus, st.Message)
	}
	h.WaitFor("the operator to delete RayCluster "+cluster, 60*time.Second, func() (bool, error) {
		_, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, cluster, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	silentOnRayJob(t, h, "ok", "", "Complete")
}

// silentOnRayJob runs doctor on the namespace and fails on any finding but v1.1.1's
// operator-outdated: the RayJob name is
// healthy, with its cluster ("" for none) and deployment status.
func silentOnRayJob(t *testing.T, h *H, name, cluster, status string) {
	t.Helper()
	d, res := h.doctorJSON()
	for _, f := range d.Findings {
		if f.Rule == "operator-outdated" { // v1.1.1's operator itself, not the RayJob
			continue
		}
		t.Errorf("finding on a healthy RayJob (%s): %s %s %s: %s", status, f.Severity, f.Rule, f.Object.Name, f.Message)
	}
	found := false
	for _, j := range d.RayJobs {
		if j.Name == name {
			found = j.Health == "healthy" && j.Cluster == cluster && j.JobDeploymentStatus == status
		}
	}
	if !found || res.Code != 0 || len(d.Blind) != 0 {
		t.Errorf("rayJobs %+v (want %s healthy on %q, %s), blind %v, exit %d\n%s", d.RayJobs, name, cluster, status, d.Blind, res.Code, res)
	}
}

// rayjob-submitter: a K8sJobMode RayJob's submitter fails while the Job retries
// (submitterConfig.backoffLimit 6 on v1.5.0 and v1.6.0, so it retries for minutes; v1.1.1
// hard-codes 2, about 30 s of retries with the Job controller's 10 s and 20 s backoff). The
// kubelet's part is played (play.KubeletJobPodsFail: the container exits 1); the Job controller
// and the operator are real, and the RayJob still says Running. doctor says which attempt failed,
// how, and where its log is.
func matrixRayJobSubmitter(t *testing.T, h *H, v kubeRayVersion) {
	h.jobPodsExit1()
	six := int32(6)
	h.createRayJob("retry", func(j *rayv1.RayJob) { j.Spec.SubmitterConfig = &rayv1.SubmitterConfig{BackoffLimit: &six} })
	var failed string
	h.WaitFor("a failed attempt of RayJob retry's submitter", 120*time.Second, func() (bool, error) {
		pods, err := h.Kube.CoreV1().Pods(h.NS).List(h.Ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=retry"})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodFailed {
				failed = p.Name
				return true, nil
			}
		}
		return false, nil
	})
	st := h.waitRayJob("retry", "Running", time.Second, func(s rayv1.RayJobStatus) bool { return s.JobDeploymentStatus == rayv1.JobDeploymentStatusRunning })
	// doctor stays silent while a later attempt is Running (it may submit normally); the played
	// kubelet runs each attempt for a moment before it fails, so ask again past such a moment.
	var d drDoc
	var res Result
	h.WaitFor("doctor's report of the failed attempts", 30*time.Second, func() (bool, error) {
		d, res = h.doctorJSON()
		return slices.ContainsFunc(d.Findings, func(f drFinding) bool { return f.Rule == "rayjob-submitter-failing" }), nil
	})
	f := d.finding(t, st.RayClusterName, "rayjob-submitter-failing")
	wantContains(t, "message", f.Message, "RayJob "+h.NS+"/retry is Running, but", "attempt(s) of its submitter failed, the last: pod retry-", "exited with code 1 (Error)")
	wantContains(t, "remedy", f.Remedy, "kubectl logs pod/", "-n "+h.NS+" -c ray-job-submitter")
	if f.Severity != "warning" || f.RayJob == nil || f.RayJob.Name != "retry" || res.Code != 0 {
		t.Errorf("severity %s, rayJob %+v, exit %d (a warning; first failed pod %s)\n%s", f.Severity, f.RayJob, res.Code, failed, res)
	}
	for _, j := range d.RayJobs {
		if j.Name == "retry" && (j.Health != "warning" || j.JobDeploymentStatus != "Running") {
			t.Errorf("RayJob entry %+v, want warning and Running", j)
		}
	}
}

// rayjob-no-cluster: a RayJob whose spec.clusterSelector names a RayCluster that does not exist
// waits in Initializing. Nothing is played. KubeRay v1.5.0 and v1.6.0 record Warning
// RayClusterNotFound on every retry, and doctor quotes it with the remedy; v1.1.1 records no
// Event, and doctor says only that the cluster does not exist.
func matrixRayJobNoCluster(t *testing.T, h *H, v kubeRayVersion) {
	h.createRayJob("adhoc", func(j *rayv1.RayJob) {
		j.Spec.RayClusterSpec = nil
		j.Spec.ClusterSelector = map[string]string{"ray.io/cluster": "nowhere"}
	})
	h.waitRayJob("adhoc", "Initializing", 60*time.Second, func(s rayv1.RayJobStatus) bool {
		return s.JobDeploymentStatus == rayv1.JobDeploymentStatusInitializing && s.StartTime != nil
	})
	if v.version != "v1.1.1" {
		h.WaitFor("the operator's Warning RayClusterNotFound", 60*time.Second, func() (bool, error) {
			evs, err := h.Kube.CoreV1().Events(h.NS).List(h.Ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=RayJob,reason=RayClusterNotFound"})
			return err == nil && len(evs.Items) > 0, err
		})
	}
	time.Sleep(2 * time.Second) // past --rayjob-initializing-too-long (1s)
	d, res := h.doctorJSON("--rayjob-initializing-too-long", "1s")
	f := d.finding(t, "", "rayjob-initializing") // no cluster
	wantContains(t, "message", f.Message, "RayJob "+h.NS+"/adhoc has been Initializing for", "its RayCluster nowhere does not exist")
	if v.version == "v1.1.1" {
		if strings.Contains(f.Message, "the operator reports") {
			t.Errorf("KubeRay v1.1.1 records no Event, yet doctor quotes one: %s", f.Message)
		}
	} else {
		wantContains(t, "message", f.Message, "and the operator reports: RayCluster "+h.NS+"/nowhere set in the clusterSelector is not found. It must be created manually", "Warning Event")
		wantContains(t, "remedy", f.Remedy, "point spec.clusterSelector")
	}
	if f.Severity != "warning" || res.Code != 0 || len(d.Blind) != 0 {
		t.Errorf("severity %s, exit %d, blind %v\n%s", f.Severity, res.Code, d.Blind, res)
	}
}

// rayservice-no-cluster: a quota of no RayClusters (count/rayclusters.ray.io: 0, enforced by the
// sandbox's real kube-apiserver) refuses the RayCluster of a new RayService. Nothing is played.
// KubeRay v1.5.0 and v1.6.0 record Warning FailedToCreateRayCluster, which doctor quotes with the
// quota's name; v1.1.1 records nothing, and doctor says so. Once the quota is gone, the operator
// creates the cluster and doctor says nothing more about the RayService itself.
func matrixRayServiceNoCluster(t *testing.T, h *H, v kubeRayVersion) {
	h.quota("no-rayclusters", "count/rayclusters.ray.io", resource.MustParse("0"))
	spec := h.sampleCluster("web").Spec
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: h.NS}, Spec: rayv1.RayServiceSpec{RayClusterSpec: spec}}
	if _, err := h.Ray.RayV1().RayServices(h.NS).Create(h.Ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if v.version != "v1.1.1" {
		h.WaitFor("the operator's Warning FailedToCreateRayCluster", 60*time.Second, func() (bool, error) {
			evs, err := h.Kube.CoreV1().Events(h.NS).List(h.Ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=RayService,reason=FailedToCreateRayCluster"})
			return err == nil && len(evs.Items) > 0, err
		})
	} else {
		time.Sleep(3 * time.Second) // the operator tried (its log says so) and records nothing
	}
	time.Sleep(time.Second) // past --operator-grace (1s)
	d, res := h.doctorJSON("--operator-grace", "1s")
	f := d.finding(t, "", "rayservice-no-cluster") // no cluster
	wantContains(t, "message", f.Message, "RayService "+h.NS+"/web has no RayCluster")
	if v.version == "v1.1.1" {
		wantContains(t, "message", f.Message, "the operator reported nothing about it")
	} else {
		wantContains(t, "message", f.Message, "the operator reports: Failed to create the RayCluster "+h.NS+"/", "exceeded quota: no-rayclusters", "Warning Event")
		wantContains(t, "remedy", f.Remedy, "the ResourceQuota no-rayclusters is used up")
	}
	if f.Severity != "error" || f.RayService == nil || f.RayService.Name != "web" || f.Cluster != nil || res.Code != 1 {
		t.Errorf("severity %s, rayService %+v, cluster %+v, exit %d\n%s", f.Severity, f.RayService, f.Cluster, res.Code, res)
	}
	table := h.Run("doctor", "rayservice/web", "--operator-grace", "1s")
	if table.Code != 1 || !strings.Contains(table.Stdout, "RayService "+h.NS+"/web: error") || !strings.Contains(table.Stdout, "rayservice-no-cluster") {
		t.Errorf("doctor rayservice/web:\n%s", table)
	}

	if err := h.Kube.CoreV1().ResourceQuotas(h.NS).Delete(h.Ctx, "no-rayclusters", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the operator to create the RayService's RayCluster", 90*time.Second, func() (bool, error) {
		l, err := h.Ray.RayV1().RayClusters(h.NS).List(h.Ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) > 0, err
	})
	d, res = h.doctorJSON("--operator-grace", "1s")
	for _, f := range d.Findings {
		if f.Rule == "rayservice-no-cluster" {
			t.Errorf("rayservice-no-cluster once the cluster exists: %s\n%s", f.Message, res)
		}
	}
	if len(d.RayServices) != 1 || d.RayServices[0].Health != "healthy" || len(d.RayServices[0].Clusters) != 1 {
		t.Errorf("rayServices %+v, want web healthy with its cluster", d.RayServices)
	}
}

// rayjob-worker-refused: the class of a RayJob in Initializing whose cluster has already failed
// (issue classes of 2026): a quota of one pod admits the head and refuses the worker, so the
// cluster never becomes ready and the RayJob waits for good. The real quota admission refuses,
// the real operator of each version records it (v1.1.1: state failed; v1.5.0+: ReplicaFailure
// FailedCreateWorkerPod); kwok runs the head. doctor reports rayjob-cluster-failed naming the
// worker group and the quota, an error (exit 1). About 15 s.
func matrixRayJobWorkerRefused(t *testing.T, h *H, v kubeRayVersion) {
	h.podQuota("one-pod", 1)
	h.createRayJob("wr", nil)
	st := h.waitRayJob("wr", "Initializing with its RayCluster", 60*time.Second, func(s rayv1.RayJobStatus) bool {
		return s.JobDeploymentStatus == rayv1.JobDeploymentStatusInitializing && s.StartTime != nil && s.RayClusterName != ""
	})
	cluster := st.RayClusterName
	h.waitRefusalRecorded(cluster, "one-pod", "FailedCreateWorkerPod", v)
	time.Sleep(2 * time.Second) // past --operator-grace (1s)
	d, res := h.doctorJSON("--operator-grace", "1s")
	f := d.finding(t, cluster, "rayjob-cluster-failed")
	wantContains(t, "message", f.Message, "RayJob "+h.NS+"/wr has been Initializing", "its RayCluster "+cluster+" has failed: the API server refuses",
		"worker", "exceeded quota: one-pod")
	wantContains(t, "remedy", f.Remedy, "the ResourceQuota one-pod is used up")
	if f.Severity != "error" || res.Code != 1 {
		t.Errorf("severity %s, exit %d\n%s", f.Severity, res.Code, res)
	}
}

// waitRefusalRecorded waits for the cluster's status to record that quota refuses its pods, as
// the operator of v writes it: v1.1.1 state failed with the refusal as its reason; v1.5.0+ the
// condition ReplicaFailure with reason (FailedCreateHeadPod or FailedCreateWorkerPod).
func (h *H) waitRefusalRecorded(cluster, quota, reason string, v kubeRayVersion) {
	h.T.Helper()
	h.WaitFor("the operator's record of "+reason+" on "+cluster, 60*time.Second, func() (bool, error) {
		rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if v.version == "v1.1.1" {
			return rc.Status.State == rayv1.Failed && strings.Contains(rc.Status.Reason, "exceeded quota: "+quota), nil
		}
		c := meta.FindStatusCondition(rc.Status.Conditions, "ReplicaFailure")
		return c != nil && c.Reason == reason, nil
	})
}
