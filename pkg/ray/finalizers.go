package ray

import rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

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
