package ray

import (
	"strconv"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/util/version"
)

const (
	// FinalizerGCSFTRedisCleanup is the finalizer KubeRay (v1.0+) puts on RayClusters with GCS
	// fault tolerance, and removes once its Redis cleanup Job finished.
	FinalizerGCSFTRedisCleanup = "ray.io/gcs-ft-redis-cleanup-finalizer"
	// AnnotationExternalStorageNS names the cluster's storage namespace in Redis (KubeRay's
	// ray.io/external-storage-namespace; without it, the RayCluster's UID).
	AnnotationExternalStorageNS = "ray.io/external-storage-namespace"
	// NodeTypeRedisCleanup is the ray.io/node-type of the cleanup Job and its pod.
	NodeTypeRedisCleanup = "redis-cleanup"
	// RedisCleanupJobSelector selects KubeRay's Redis cleanup Jobs, for the one paged LIST of Jobs.
	RedisCleanupJobSelector = LabelNodeType + "=" + NodeTypeRedisCleanup
)

// HasGCSFTFinalizer reports whether rc carries KubeRay's Redis cleanup finalizer.
func HasGCSFTFinalizer(rc *rayv1.RayCluster) bool {
	for _, f := range rc.Finalizers {
		if f == FinalizerGCSFTRedisCleanup {
			return true
		}
	}
	return false
}

// StorageNamespace is the Redis storage namespace of rc's GCS data, as every KubeRay release
// picks it for the head (common/pod.go): gcsFaultToleranceOptions.externalStorageNamespace, else
// the ray.io/external-storage-namespace annotation, else the RayCluster's UID.
func StorageNamespace(rc *rayv1.RayCluster) string {
	if o := rc.Spec.GcsFaultToleranceOptions; o != nil && o.ExternalStorageNamespace != "" {
		return o.ExternalStorageNamespace
	}
	if v, ok := rc.Annotations[AnnotationExternalStorageNS]; ok {
		return v
	}
	return string(rc.UID)
}

// AnnotationGCSFTDeletionTimeout sets, in seconds, how long KubeRay v1.6.2 and later wait after a
// RayCluster's deletion began before they remove the Redis cleanup finalizer themselves
// (forceRemoveGCSFTFinalizer, Event ForceDeletedStuckCluster); DefaultGCSFTDeletionTimeout
// without it, or when it is not a positive integer.
const AnnotationGCSFTDeletionTimeout = "ray.io/gcs-ft-deletion-timeout"

// DefaultGCSFTDeletionTimeout is RAYCLUSTER_GCS_FT_DELETION_TIMEOUT_DEFAULT (v1.6.2, v1.7.0).
const DefaultGCSFTDeletionTimeout = 300 * time.Second

// ForcesGCSFTFinalizerSince is the first release that removes the finalizer itself.
var ForcesGCSFTFinalizerSince = version.MustParseSemantic("v1.6.2")

// GCSFTDeletionTimeout is when, after its deletion began, KubeRay v1.6.2 and later remove rc's
// Redis cleanup finalizer themselves (getGCSFTDeletionTimeout).
func GCSFTDeletionTimeout(rc *rayv1.RayCluster) time.Duration {
	if s, err := strconv.Atoi(rc.Annotations[AnnotationGCSFTDeletionTimeout]); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return DefaultGCSFTDeletionTimeout
}
