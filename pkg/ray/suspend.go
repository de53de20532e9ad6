package ray

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// KubeRay v1.7.0 gave the RayService its own spec.suspend (rayservice_controller.go,
// handleSuspend): the operator deletes every cluster the RayService owns, with the condition
// Suspending (SuspendRequested, SuspendInProgress), then Suspended (SuspendComplete), and Ready
// False. Setting it back to false sets Suspended False (RayServiceResumed) and creates a cluster.
// Older releases prune the field: their RayServices never carry these conditions.
const (
	ConditionRayServiceSuspending = "Suspending"
	ConditionRayServiceSuspended  = "Suspended"
)

// RayServiceSuspended reports whether the operator says rs is suspended by its own spec, or on
// its way there: it then owns no RayCluster by the user's wish.
func RayServiceSuspended(rs *rayv1.RayService) bool {
	return meta.IsStatusConditionTrue(rs.Status.Conditions, ConditionRayServiceSuspended) ||
		meta.IsStatusConditionTrue(rs.Status.Conditions, ConditionRayServiceSuspending)
}
