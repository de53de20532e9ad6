package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// Seed 000 with the real KubeRay v1.1.1: an evicted head is never replaced.
func TestSeed000EvictedHeadStaysWithKubeRayV111(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("seed", nil)
	head := h.WaitClusterRunning("seed", 90*time.Second)

	// The kubelet's part (node-pressure eviction) is played through the API.
	if _, err := play.KubeletEvict(h.Ctx, h.Kube, h.NS, head.Name, "ephemeral-storage"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Second)
	heads := h.Pods("seed", "head")
	if len(heads) != 1 || heads[0].Name != head.Name {
		t.Fatalf("want the evicted head %s alone after 30s, got %d heads: %v", head.Name, len(heads), podNames(heads))
	}
	if heads[0].Status.Phase != corev1.PodFailed || heads[0].Status.Reason != "Evicted" {
		t.Fatalf("head %s is %s/%s, want Failed/Evicted", head.Name, heads[0].Status.Phase, heads[0].Status.Reason)
	}
	if log, _ := os.ReadFile(h.SB.LogPath("kuberay-operator")); !strings.Contains(string(log), "will not delete the Pod because its restartPolicy is set to 'Always'") {
		t.Errorf("operator log lacks the seed's 'will not delete the Pod' line")
	}

	// What a person had to do: delete the pod. The operator then makes a new head.
	if err := h.Kube.CoreV1().Pods(h.NS).Delete(h.Ctx, head.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	newHead := h.WaitClusterRunning("seed", 60*time.Second)
	if newHead.Name == head.Name {
		t.Fatalf("head %s was not replaced", head.Name)
	}
}

// KubeRay v1.5.0 (fixed since v1.2.0, PR #2217) replaces an evicted head by itself.
func TestEvictedHeadReplacedByKubeRayV150(t *testing.T) {
	t.Parallel()
	h := newHOn(t, sandboxV150(t))
	h.CreateRayCluster("fixed", nil)
	head := h.WaitClusterRunning("fixed", 90*time.Second)
	if _, err := play.KubeletEvict(h.Ctx, h.Kube, h.NS, head.Name, "memory"); err != nil {
		t.Fatal(err)
	}
	newHead := h.WaitClusterRunning("fixed", 60*time.Second)
	if newHead.Name == head.Name {
		t.Fatalf("head %s was not replaced", head.Name)
	}
	if _, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, head.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("evicted head %s still exists (err=%v)", head.Name, err)
	}
}

func podNames(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}
