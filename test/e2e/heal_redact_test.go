package e2e

import (
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// heal quotes a terminal head's status message in its reasons, which are printed, logged and
// written into Events. A message that echoes a Redis URI with the cluster's password (the
// kubelet's part, played: it writes the message) shows the password redacted in every format.
func TestHealRedactsSecretsInItsReasons(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	const password = "Sup3rS3cretRedisPw"
	h.CreateRayCluster("redact", func(rc *rayv1.RayCluster) {
		c := &rc.Spec.HeadGroupSpec.Template.Spec.Containers[0]
		c.Env = append(c.Env, corev1.EnvVar{Name: "REDIS_PASSWORD", Value: password})
	})
	h.WaitClusterRunning("redact", 90*time.Second)
	old := h.healEvict("redact")
	old.Status.Message = "The node was low on resource: memory. ray start had --address=redis://:" + password + "@redis:6379 "
	evicted, err := h.Kube.CoreV1().Pods(h.NS).UpdateStatus(h.Ctx, &old, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"heal", "redact", "--dry-run"},
		{"heal", "redact", "--dry-run", "-o", "json"},
	} {
		res := h.Run(args...)
		// The text plan shows a short reason (the kubelet's first sentence); -o json keeps the
		// whole why, where the password must read [redacted].
		redacted := args[len(args)-1] != "json" || strings.Contains(res.Stdout, "[redacted]@redis:6379")
		if res.Code != 0 || !strings.Contains(res.Stdout, evicted.Name) || !redacted {
			t.Errorf("%v: want exit 0 and the reason with the password redacted, got %s", args, res)
		}
		if strings.Contains(res.Stdout+res.Stderr, password) {
			t.Errorf("%v printed the Redis password: %s", args, res)
		}
	}
	if p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, evicted.Name, metav1.GetOptions{}); err != nil || p.UID != evicted.UID || p.DeletionTimestamp != nil {
		t.Errorf("--dry-run changed the evicted head: %v", err)
	}
}
