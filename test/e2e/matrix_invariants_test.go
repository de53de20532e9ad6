package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// group-removed: a worker group is removed from a running RayCluster's spec. The real operator of
// each version sees the new spec (observedGeneration) and leaves the group's pod running, since it
// reconciles only the groups the spec names; doctor, silent while spec and pods agreed, reports
// workers-outside-spec naming the group and the spec's groups; heal leaves it alone. About 15 s.
func matrixGroupRemoved(t *testing.T, h *H, v kubeRayVersion) {
	h.CreateRayCluster("gr", func(rc *rayv1.RayCluster) {
		extra := *rc.Spec.WorkerGroupSpecs[0].DeepCopy()
		extra.GroupName, extra.Replicas, extra.MinReplicas = "extra", ptr.To[int32](1), ptr.To[int32](1)
		rc.Spec.WorkerGroupSpecs = append(rc.Spec.WorkerGroupSpecs, extra)
	})
	h.WaitClusterRunning("gr", 90*time.Second)
	h.waitProvisioned("gr", v)
	h.WaitFor("a Running pod of group extra", 60*time.Second, func() (bool, error) {
		for _, p := range h.Pods("gr", "worker") {
			if p.Labels["ray.io/group"] == "extra" && PodRunningReady(&p) {
				return true, nil
			}
		}
		return false, nil
	})
	if d, _ := h.doctorJSON(); len(d.rules("gr")) != 0 {
		t.Fatalf("doctor before the group was removed: %v", d.rules("gr"))
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, "gr", metav1.GetOptions{})
		if err != nil {
			return err
		}
		rc.Spec.WorkerGroupSpecs = rc.Spec.WorkerGroupSpecs[:1]
		_, err = h.Ray.RayV1().RayClusters(h.NS).Update(h.Ctx, rc, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the operator to see the spec without group extra", 60*time.Second, func() (bool, error) {
		rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, "gr", metav1.GetOptions{})
		return err == nil && rc.Status.ObservedGeneration == rc.Generation, err
	})
	d, res := h.doctorJSON()
	wantRules(t, d, "gr", "workers-outside-spec raycluster/gr")
	f := d.finding(t, "gr", "workers-outside-spec")
	wantContains(t, "the finding", f.Message, "group extra", "worker groups are "+h.sampleCluster("x").Spec.WorkerGroupSpecs[0].GroupName)
	if res.Code != 0 {
		t.Errorf("a warning, under the default --fail-on error: want exit 0, got %s", res)
	}
	var left int
	for _, p := range h.Pods("gr", "worker") {
		if p.Labels["ray.io/group"] == "extra" && p.DeletionTimestamp == nil {
			left++
		}
	}
	if left != 1 {
		t.Errorf("the operator (%s) should leave the removed group's pod running: %d left", v.version, left)
	}
	if hd, res := h.healJSON("--dry-run"); len(hd.Plan.Actions) != 0 {
		t.Errorf("heal must leave workers-outside-spec to the user: %s", res)
	}
}

// container-failed: a head with restartPolicy Never and a second container beside Ray's (as a
// SidecarMode RayJob's submitter is): the kubelet's report that the second container exited 1 is
// played (no kubelet runs here), Ray's container still running. The real operator of each version
// leaves the pod (it judges the Ray container only); doctor reports container-never-restarted
// naming the container and its exit code; heal leaves it alone. About 10 s.
func matrixContainerFailed(t *testing.T, h *H, v kubeRayVersion) {
	h.CreateRayCluster("cf", func(rc *rayv1.RayCluster) {
		spec := &rc.Spec.HeadGroupSpec.Template.Spec
		spec.RestartPolicy = corev1.RestartPolicyNever
		submitter := *spec.Containers[0].DeepCopy()
		submitter.Name, submitter.Ports, submitter.Resources = "submitter", nil, corev1.ResourceRequirements{}
		spec.Containers = append(spec.Containers, submitter)
	})
	head := h.WaitClusterRunning("cf", 90*time.Second)
	h.kubeletContainerExited(head.Name, "submitter", 1)
	d, res := h.doctorJSON()
	f := d.finding(t, "cf", "container-never-restarted")
	wantContains(t, "the finding", f.Message, "container submitter of head pod "+head.Name, "exited with code 1")
	if res.Code != 1 {
		t.Errorf("an error finding: want exit 1, got %s", res)
	}
	if p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, head.Name, metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
		t.Errorf("the operator (%s) should leave the head (it judges the Ray container only): %v", v.version, err)
	}
	if hd, res := h.healJSON("--dry-run"); len(hd.Plan.Actions) != 0 {
		t.Errorf("heal must leave container-never-restarted to the user: %s", res)
	}
}

// budget-uncomputable: doctor -f first judges a maxUnavailable budget written beside the cluster by
// its shape. Then two PodDisruptionBudgets over a running RayCluster, made by nobody but the
// user (no KubeRay version makes one): an integer minAvailable 1 over the head, which the real
// disruption controller computes (silent: a head kept through drains is what was asked), and a
// maxUnavailable 1 over the workers, which it cannot compute (a RayCluster has no scale
// subresource): it marks it SyncFailed with a Warning Event of its own, and doctor reports
// budget-never-allows naming the budget, its pods and the controller's words. No kubelet or Ray
// is played. About 15 s.
func matrixBudgetUncomputable(t *testing.T, h *H, v kubeRayVersion) {
	// doctor -f, before anything is applied: the budget's shape alone says it (about 0.3 s).
	one := intstr.FromInt32(1)
	doc := &policyv1.PodDisruptionBudget{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: "bu-workers"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ray.io/cluster": "bu", "ray.io/node-type": "worker"}}}}
	file := manifestFile(t, "bu", h.sampleCluster("bu"), doc)
	fd, res := h.doctorJSON("-f", file)
	pf := fd.finding(t, "bu", "budget-never-allows")
	wantContains(t, "doctor -f", pf.Message, "PodDisruptionBudget "+h.NS+"/bu-workers", "maxUnavailable 1 cannot be computed over Ray pods")
	if res.Code != 0 {
		t.Errorf("doctor -f: a warning, want exit 0, got %s", res)
	}

	h.CreateRayCluster("bu", nil)
	h.WaitClusterRunning("bu", 90*time.Second)
	h.WaitFor("a Running worker", 60*time.Second, func() (bool, error) {
		for _, p := range h.Pods("bu", "worker") {
			if PodRunningReady(&p) {
				return true, nil
			}
		}
		return false, nil
	})
	for _, b := range []struct {
		name, nodeType string
		spec           policyv1.PodDisruptionBudgetSpec
	}{{"bu-head", "head", policyv1.PodDisruptionBudgetSpec{MinAvailable: &one}}, {"bu-workers", "worker", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one}}} {
		b.spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"ray.io/cluster": "bu", "ray.io/node-type": b.nodeType}}
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: b.name, Namespace: h.NS}, Spec: b.spec}
		if _, err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Create(h.Ctx, pdb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.WaitFor("the disruption controller's verdicts on both budgets", 30*time.Second, func() (bool, error) {
		head, err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Get(h.Ctx, "bu-head", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		workers, err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Get(h.Ctx, "bu-workers", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(workers.Status.Conditions, policyv1.DisruptionAllowedCondition)
		return head.Status.ObservedGeneration == head.Generation && head.Status.ExpectedPods == 1 && c != nil && c.Reason == policyv1.SyncFailedReason, nil
	})
	d, res := h.doctorJSON()
	wantRules(t, d, "bu", "budget-never-allows poddisruptionbudget/bu-workers")
	f := d.finding(t, "bu", "budget-never-allows")
	wantContains(t, "the finding", f.Message, "PodDisruptionBudget "+h.NS+"/bu-workers", "bu-worker", "SyncFailed")
	if res.Code != 0 {
		t.Errorf("a warning, under the default --fail-on error: want exit 0, got %s", res)
	}
	// A bundle keeps the budgets over the cluster's pods, and doctor --from finds the same (about
	// 1 s; --no-ray-logs and --ray=false: no Ray runs here).
	archive := filepath.Join(t.TempDir(), "bu.tar.gz")
	if res := h.Run("bundle", "bu", "-o", archive, "--no-ray-logs", "--ray=false"); res.Code != 0 {
		t.Fatalf("bundle: %s", res)
	}
	from := h.Run("doctor", "--from", archive, "-o", "json", "--kubeconfig", "/nonexistent")
	if !strings.Contains(from.Stdout, `"rule": "budget-never-allows"`) || !strings.Contains(from.Stdout, "PodDisruptionBudget "+h.NS+"/bu-workers") {
		t.Errorf("doctor --from the bundle lost the budget's finding: %s", from)
	}
	evs, err := h.Kube.CoreV1().Events(h.NS).List(h.Ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=bu-workers"})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range evs.Items {
		reasons = append(reasons, e.Reason)
	}
	if !strings.Contains(strings.Join(reasons, ","), "CalculateExpectedPodCountFailed") {
		t.Errorf("the disruption controller's Warning (docs/rules.md names it): Events %v", reasons)
	}
	if hd, res := h.healJSON("--dry-run"); len(hd.Plan.Actions) != 0 {
		t.Errorf("heal must leave budget-never-allows to the user: %s", res)
	}
}

// rayservice-unsuspend (kuberay #4686): a RayService made with rayClusterConfig.suspend true, whose
// suspend then goes back to false. Every version makes its cluster suspended. v1.1.1 carries the
// change to a running cluster, and doctor stays silent; v1.5.0 and v1.6.0 never do (their
// shouldUpdateCluster; v1.7.0 applies the nested suspend at creation only): doctor reports suspend-not-reached naming the pending cluster, and its
// remedy, deleting that cluster, is followed: the operator makes a running one from the
// RayService's spec, and doctor is silent again. No kubelet or Ray is played (nothing runs in the
// suspended cluster). About 25 s.
func matrixRayServiceUnsuspend(t *testing.T, h *H, v kubeRayVersion) {
	spec := h.sampleCluster("us").Spec
	spec.Suspend = ptr.To(true)
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "us", Namespace: h.NS}, Spec: rayv1.RayServiceSpec{RayClusterSpec: spec}}
	if _, err := h.Ray.RayV1().RayServices(h.NS).Create(h.Ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var first rayv1.RayCluster
	h.WaitFor("the operator to make the RayService's cluster, suspended", 60*time.Second, func() (bool, error) {
		l, err := h.Ray.RayV1().RayClusters(h.NS).List(h.Ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) == 0 {
			return false, err
		}
		first = l.Items[0]
		return ptr.Deref(first.Spec.Suspend, false), nil
	})
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rs, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "us", metav1.GetOptions{})
		if err != nil {
			return err
		}
		rs.Spec.RayClusterSpec.Suspend = ptr.To(false)
		_, err = h.Ray.RayV1().RayServices(h.NS).Update(h.Ctx, rs, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	running := func(what string, timeout time.Duration) {
		h.WaitFor(what, timeout, func() (bool, error) {
			l, err := h.Ray.RayV1().RayClusters(h.NS).List(h.Ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			for _, rc := range l.Items {
				if rc.DeletionTimestamp == nil && !ptr.Deref(rc.Spec.Suspend, false) {
					return true, nil
				}
			}
			return false, nil
		})
	}
	if v.version == "v1.1.1" {
		running("v1.1.1 to carry the change to a running cluster", 30*time.Second)
		for _, f := range doctorRules(h) {
			if f == "suspend-not-reached" {
				t.Errorf("suspend-not-reached on v1.1.1, which carried the change")
			}
		}
		return
	}
	time.Sleep(8 * time.Second) // the operator's reconciles of the change (it requeues every 2 s)
	rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, first.Name, metav1.GetOptions{})
	if err != nil || !ptr.Deref(rc.Spec.Suspend, false) {
		t.Fatalf("%s should leave its cluster %s suspended (kuberay #4686): %v", v.version, first.Name, err)
	}
	d, res := h.doctorJSON("--operator-grace", "5s")
	var f *drFinding
	for i := range d.Findings {
		if d.Findings[i].Rule == "suspend-not-reached" {
			f = &d.Findings[i]
		}
	}
	if f == nil {
		t.Fatalf("no suspend-not-reached: %v", doctorRules(h))
	}
	// What the release does with the change, read in its source: v1.5.0 and v1.6.0 never carry a
	// change of suspend alone; v1.7.0 applies the nested suspend only when it creates the cluster.
	why := "KubeRay " + v.version + " never updates"
	if v.version == "v1.7.0" {
		why = "KubeRay v1.7.0 applies spec.rayClusterConfig.suspend only when it creates the cluster"
	}
	wantContains(t, "the finding", f.Message, "RayService "+h.NS+"/us asks for a running cluster", "pending RayCluster "+first.Name+" is suspended",
		why, "kuberay #4686")
	wantContains(t, "the remedy", f.Remedy, "kubectl delete raycluster "+first.Name+" -n "+h.NS)
	if res.Code != 1 {
		t.Errorf("an error finding: want exit 1, got %s", res)
	}
	// The remedy, followed.
	if err := h.Ray.RayV1().RayClusters(h.NS).Delete(h.Ctx, first.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	running("the operator to make a running cluster from the RayService's spec", 60*time.Second)
	for _, r := range doctorRules(h) {
		if r == "suspend-not-reached" {
			t.Errorf("suspend-not-reached after the remedy was followed")
		}
	}
}

// doctorRules lists the rule of every finding of doctor run with --operator-grace 1s.
func doctorRules(h *H) []string {
	h.T.Helper()
	time.Sleep(time.Second) // past --operator-grace (1s)
	d, _ := h.doctorJSON("--operator-grace", "1s")
	var out []string
	for _, f := range d.Findings {
		out = append(out, f.Rule)
	}
	return out
}
