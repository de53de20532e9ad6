package e2e

import (
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Scenes several tests set up the same way, on the operator of h's sandbox.

// headStuckTerminating creates RayCluster name with its head bound to a node that nothing
// heartbeats (play.NodeLost, as a node that stopped reporting), then deletes that head with a
// 1s grace period: no kubelet confirms the kill, so the head stays Terminating (kuberay #4078).
// The nodeName is removed from the spec before the delete, so the operator's next head may go
// anywhere, as the scheduler would place it. It returns the stuck head as it was before the delete.
func (h *H) headStuckTerminating(name string) corev1.Pod {
	h.T.Helper()
	lost := "lost-" + h.NS
	healNodeLost(h, lost)
	h.T.Cleanup(func() { _ = h.Kube.CoreV1().Nodes().Delete(h.Ctx, lost, metav1.DeleteOptions{}) })
	h.CreateRayCluster(name, func(rc *rayv1.RayCluster) { rc.Spec.HeadGroupSpec.Template.Spec.NodeName = lost })
	var head corev1.Pod
	h.WaitFor("the operator to create the head", 60*time.Second, func() (bool, error) {
		heads := h.Pods(name, "head")
		if len(heads) == 1 {
			head = heads[0]
		}
		return len(heads) == 1, nil
	})
	if _, err := h.Ray.RayV1().RayClusters(h.NS).Patch(h.Ctx, name, types.JSONPatchType,
		[]byte(`[{"op":"remove","path":"/spec/headGroupSpec/template/spec/nodeName"}]`), metav1.PatchOptions{}); err != nil {
		h.T.Fatal(err)
	}
	grace := int64(1)
	if err := h.Kube.CoreV1().Pods(h.NS).Delete(h.Ctx, head.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		h.T.Fatal(err)
	}
	return head
}

// unschedulableHead creates RayCluster name whose head asks for a node label no node has, and
// waits for the real scheduler to mark the head Unschedulable.
func (h *H) unschedulableHead(name string) corev1.Pod {
	h.T.Helper()
	h.CreateRayCluster(name, func(rc *rayv1.RayCluster) {
		rc.Spec.HeadGroupSpec.Template.Spec.NodeSelector = map[string]string{"kubectl-ray.io/no-such-node": "true"}
	})
	var head corev1.Pod
	h.WaitFor("the scheduler to mark the head Unschedulable", 60*time.Second, func() (bool, error) {
		heads := h.Pods(name, "head")
		if len(heads) != 1 {
			return false, nil
		}
		head = heads[0]
		for _, c := range head.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
				return true, nil
			}
		}
		return false, nil
	})
	return head
}
