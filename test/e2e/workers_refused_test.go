package e2e

import (
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// refused: a ResourceQuota of two pods in the namespace, enforced by the sandbox's real
// kube-apiserver, refuses the operator's third worker and then a second cluster's head. Nothing is
// played: the operator of each version reports the refusal its own way (v1.1.1 state failed and
// reason, Warning PodReconciliationError; v1.5.0 and v1.6.0 ReplicaFailure, Warning
// FailedToCreate*Pod), doctor quotes it under workers-missing and head-missing and names the
// quota, and once the quota is raised the operator creates the pods and doctor is silent again.
func matrixRefused(t *testing.T, h *H, v kubeRayVersion) {
	h.podQuota("two-pods", 2)
	three := int32(3)
	h.CreateRayCluster("rq", func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].Replicas = &three
		rc.Spec.WorkerGroupSpecs[0].MaxReplicas = &three
	})
	h.WaitFor("the operator's report of the refused worker", 90*time.Second, func() (bool, error) {
		rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, "rq", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if v.version == "v1.1.1" {
			return rc.Status.State == rayv1.Failed && strings.Contains(rc.Status.Reason, "exceeded quota: two-pods"), nil
		}
		c := meta.FindStatusCondition(rc.Status.Conditions, "ReplicaFailure")
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == "FailedCreateWorkerPod", nil
	})
	h.CreateRayCluster("rq0", nil) // the quota is used up: its head is refused
	refusedHead := "FailedToCreateHeadPod"
	if v.version == "v1.1.1" {
		refusedHead = "PodReconciliationError"
	}
	h.waitOperatorWarning("rq0", refusedHead)
	time.Sleep(2 * time.Second) // head-missing judges a cluster older than --operator-grace (1s) only

	d, res := h.doctorJSON("--operator-grace", "1s")
	f := d.finding(t, "rq", "workers-missing")
	wantContains(t, "message", f.Message, "worker group "+h.sampleCluster("x").Spec.WorkerGroupSpecs[0].GroupName+" has 1 of 3 pods", "is forbidden: exceeded quota: two-pods")
	wantContains(t, "remedy", f.Remedy, "the ResourceQuota two-pods is used up", "kubectl describe resourcequota two-pods -n "+h.NS)
	hm := d.finding(t, "rq0", "head-missing")
	wantContains(t, "message", hm.Message, "has no head pod: the API server refuses the operator's head pod:", "exceeded quota: two-pods")
	wantContains(t, "remedy", hm.Remedy, "the ResourceQuota two-pods is used up")
	if f.Severity != "warning" || hm.Severity != "error" || res.Code != 1 {
		t.Errorf("severities %s, %s; doctor exit %d, want 1 (an error)\n%s", f.Severity, hm.Severity, res.Code, res)
	}
	if got := d.rules("rq"); len(got) != 1 {
		t.Errorf("rq: %v, want only workers-missing", got)
	}

	// Raised: the operator creates the pods at its next reconcile (a touch brings it now: its
	// backoff after failed reconciles can be long), and the refusals, still in the Events, explain
	// nothing any more.
	q, err := h.Kube.CoreV1().ResourceQuotas(h.NS).Get(h.Ctx, "two-pods", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Spec.Hard[corev1.ResourcePods] = resource.MustParse("20")
	if _, err := h.Kube.CoreV1().ResourceQuotas(h.NS).Update(h.Ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"rq", "rq0"} {
		patch := []byte(`{"metadata":{"annotations":{"e2e/touched":"` + time.Now().Format("150405.000") + `"}}}`)
		if _, err := h.Ray.RayV1().RayClusters(h.NS).Patch(h.Ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.WaitFor("rq's 3 workers and rq0's head", 120*time.Second, func() (bool, error) {
		return len(h.Pods("rq", "worker")) == 3 && len(h.Pods("rq0", "head")) == 1, nil
	})
	h.WaitClusterRunning("rq", 90*time.Second)
	h.WaitClusterRunning("rq0", 90*time.Second)
	d, res = h.doctorJSON("--operator-grace", "1s")
	if len(d.rules("rq")) != 0 || len(d.rules("rq0")) != 0 {
		t.Fatalf("after the quota was raised: rq %v, rq0 %v\n%s", d.rules("rq"), d.rules("rq0"), res)
	}
}

// waitOperatorWarning waits for a Warning Event with reason about RayCluster cluster.
func (h *H) waitOperatorWarning(cluster, reason string) {
	h.T.Helper()
	h.WaitFor("a Warning "+reason+" about "+cluster, 90*time.Second, func() (bool, error) {
		evs, err := h.Kube.CoreV1().Events(h.NS).List(h.Ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + cluster + ",type=Warning"})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.Reason == reason {
				return true, nil
			}
		}
		return false, nil
	})
}
