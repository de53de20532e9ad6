package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// The pressure commands check the pod they read (a Ray pod, Running, not ours to refuse) and then
// PATCH pods/ephemeralcontainers by name. The patch carries the uid and resourceVersion read, so
// the real API server refuses it if the pod changed or was replaced under the same name in
// between (a person lingering at the prompt while the head is evicted and recreated). This test
// calls the library the command calls, against the real API server; the binary's own inject
// path is covered by TestPressureInjectStoresExactEphemeralContainer.
func TestPressurePatchCarriesPreconditions(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	c, err := kube.ClientsFor(h.SB.Admin)
	if err != nil {
		t.Fatal(err)
	}
	newPod := func(nodeSelector map[string]string) *corev1.Pod {
		p, err := h.Kube.CoreV1().Pods(h.NS).Create(h.Ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "demo-head", Namespace: h.NS},
			Spec: corev1.PodSpec{NodeSelector: nodeSelector,
				Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.9.0"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ec := corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "kubectl-ray-disk-pressure-test1", Image: "busybox:1.36.1", Command: []string{"true"},
		TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent}}
	inject := func(read *corev1.Pod) error {
		patch, err := kube.EphemeralContainerPatch(read, ec)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.AddEphemeralContainer(h.Ctx, read, patch, false)
		return err
	}
	wantRefused := func(what string, err error) {
		t.Helper()
		if exit.CodeOf(err) != exit.API || err == nil || !strings.Contains(err.Error(), "changed since it was read") {
			t.Fatalf("%s: want exit 3 'changed since it was read', got %v", what, err)
		}
		now, gerr := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, "demo-head", metav1.GetOptions{})
		if gerr != nil {
			t.Fatal(gerr)
		}
		if len(now.Spec.EphemeralContainers) != 0 {
			t.Fatalf("%s: the pod gained %d ephemeral containers", what, len(now.Spec.EphemeralContainers))
		}
	}

	// The pod changed after it was read: refused.
	//
	// This first pod is never scheduled (no node has the label it selects), so kwok never plays
	// it. kwok keys its pending stage jobs by namespace/name and deletes by name alone: its job
	// for this pod's deletion, queued after the DELETED event, once deleted the replacement
	// below, created under the same name a moment later (CI).
	stale := newPod(map[string]string{"e2e.kubectl-ray.io/no-such-node": "true"})
	// (A merge patch: the scheduler is writing the pod's status too.)
	if _, err := h.Kube.CoreV1().Pods(h.NS).Patch(h.Ctx, "demo-head", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	wantRefused("pod changed since read", inject(stale))

	// Replaced under the same name: a read of the old pod, even with the new pod's
	// resourceVersion, names the old uid. Refused.
	if err := h.Kube.CoreV1().Pods(h.NS).Delete(h.Ctx, "demo-head", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("demo-head gone", 30*time.Second, func() (bool, error) {
		_, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, "demo-head", metav1.GetOptions{})
		return err != nil, nil
	})
	newPod(nil)
	// The scheduler binds it and kwok (the kubelet's part) runs it; read it once it is settled,
	// so that only the uid differs below.
	var now *corev1.Pod
	h.WaitFor("demo-head Running", 60*time.Second, func() (bool, error) {
		p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, "demo-head", metav1.GetOptions{})
		now = p
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
	oldUID := now.DeepCopy()
	oldUID.UID = stale.UID
	wantRefused("pod replaced under the same name", inject(oldUID))

	// The pod as it is now: injected.
	if err := inject(now); err != nil {
		t.Fatalf("inject on a fresh read: %v", err)
	}
	got, err := h.Kube.CoreV1().Pods(h.NS).Get(context.Background(), "demo-head", metav1.GetOptions{})
	if err != nil || len(got.Spec.EphemeralContainers) != 1 {
		t.Fatalf("after a fresh inject: %v, %d ephemeral containers", err, len(got.Spec.EphemeralContainers))
	}
}
