package headkill

import (
	"context"
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// killHead reads the head again right before the kill, so the delete's uid and resourceVersion
// preconditions are current after the warm-up; a head replaced meanwhile is not killed.
func killHead(ctx context.Context, c Cluster, head *corev1.Pod, mode kube.KillMode) error {
	now, err := c.GetPodByName(ctx, head.Namespace, head.Name)
	if err != nil {
		return err
	}
	if now.UID != head.UID {
		// Not a failed SLO: none was measured. The head that was the target no longer exists.
		return fault.Errorf(fault.NotFound, "head pod %s/%s was replaced during the warm-up (uid %s, was %s); nothing was killed; run again to target the new head",
			now.Namespace, now.Name, now.UID, head.UID)
	}
	return c.KillHeadPod(ctx, now, mode, false)
}

// killError explains a refused kill. Nothing was killed in every case.
func killError(err error) error {
	var refused *kube.Refused
	if !errors.As(err, &refused) {
		return err // explained by pkg/kube, or the head replaced during the warm-up
	}
	return fault.Errorf(fault.API, "%s: a PodDisruptionBudget blocks the eviction; nothing was killed (use %s delete to ignore PodDisruptionBudgets)",
		strings.TrimSuffix(refused.Error(), "."), SetMode)
}
