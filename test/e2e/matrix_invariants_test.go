package e2e

import (
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	pod, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, head.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	for i := range pod.Status.ContainerStatuses {
		if cs := &pod.Status.ContainerStatuses[i]; cs.Name == "submitter" {
			cs.Ready = false
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: now, FinishedAt: now}}
		}
	}
	for i := range pod.Status.Conditions {
		if c := &pod.Status.Conditions[i]; c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			c.Status, c.Reason, c.LastTransitionTime = corev1.ConditionFalse, "ContainersNotReady", now
		}
	}
	if _, err := h.Kube.CoreV1().Pods(h.NS).UpdateStatus(h.Ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
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
