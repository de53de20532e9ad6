package ray

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// KubeRay v1.7.0's embedded GCS fault tolerance (gcsFaultToleranceOptions.backend: rocksdb,
// feature gate GCSFaultToleranceEmbeddedStorage) keeps the GCS in RocksDB on a volume of the
// head: the operator sets RAY_gcs_storage=rocksdb and RAY_gcs_storage_path=/data/gcs on the Ray
// container and mounts a PersistentVolumeClaim there as the volume gcs-storage, the claim being
// the user's storage.claimName or its own <cluster>-gcs-pvc (common/pod.go configureEmbeddedFT,
// utils.GetGCSStoragePVCName). The API types this plugin builds with predate the field; the
// head pod says it all, and older operators' pods wired by hand the same way say it too.
const (
	EnvGCSStorage       = "RAY_gcs_storage"
	EnvGCSStoragePath   = "RAY_gcs_storage_path"
	GCSStorageRocksDB   = "rocksdb"
	GCSStorageVolume    = "gcs-storage"
	GCSStorageMountPath = "/data/gcs"
)

// GCSStore is where a head keeps its RocksDB GCS store: the claim, the directory in it (the
// mount's subPath with the store's path below the mount: storage.subPath lets clusters share a
// claim in directories of their own), and the volume it is mounted as.
type GCSStore struct {
	Claim  string
	Dir    string
	Volume string
}

// GCSStoreOf is the claim a head pod's RocksDB GCS store lives on, when its Ray container (the
// first) selects RocksDB and mounts a claim at the store's path.
func GCSStoreOf(p *corev1.Pod) (GCSStore, bool) {
	if len(p.Spec.Containers) == 0 {
		return GCSStore{}, false
	}
	c := &p.Spec.Containers[0]
	storage, path := "", GCSStorageMountPath
	for _, e := range c.Env {
		switch {
		case e.Name == EnvGCSStorage && e.ValueFrom == nil:
			storage = e.Value
		case e.Name == EnvGCSStoragePath && e.ValueFrom == nil && e.Value != "":
			path = e.Value
		}
	}
	if !strings.EqualFold(storage, GCSStorageRocksDB) {
		return GCSStore{}, false
	}
	// The mount holding the store's path: the longest mount path it lies under.
	path = strings.TrimRight(path, "/")
	var mount *corev1.VolumeMount
	for i, m := range c.VolumeMounts {
		mp := strings.TrimRight(m.MountPath, "/")
		if (path == mp || strings.HasPrefix(path, mp+"/")) && (mount == nil || len(mp) > len(strings.TrimRight(mount.MountPath, "/"))) {
			mount = &c.VolumeMounts[i]
		}
	}
	if mount == nil {
		return GCSStore{}, false
	}
	for _, v := range p.Spec.Volumes {
		if v.Name == mount.Name && v.PersistentVolumeClaim != nil {
			below := strings.TrimPrefix(path, strings.TrimRight(mount.MountPath, "/"))
			dir := strings.Trim(strings.Trim(mount.SubPath, "/")+below, "/")
			return GCSStore{Claim: v.PersistentVolumeClaim.ClaimName, Dir: dir, Volume: v.Name}, true
		}
	}
	return GCSStore{}, false
}

// GCSStoreSpec is what GCSStoreOf reads of a pod, and nothing else: the env that selects the
// store, its mount and its volume. A trimmed pod keeps it.
func GCSStoreSpec(p *corev1.Pod) (env []corev1.EnvVar, mounts []corev1.VolumeMount, volumes []corev1.Volume, ok bool) {
	s, ok := GCSStoreOf(p)
	if !ok {
		return nil, nil, nil, false
	}
	c := &p.Spec.Containers[0]
	for _, e := range c.Env {
		if (e.Name == EnvGCSStorage || e.Name == EnvGCSStoragePath) && e.ValueFrom == nil {
			env = append(env, corev1.EnvVar{Name: e.Name, Value: e.Value})
		}
	}
	for _, m := range c.VolumeMounts {
		if m.Name == s.Volume {
			mounts = append(mounts, corev1.VolumeMount{Name: m.Name, MountPath: m.MountPath, SubPath: m.SubPath})
		}
	}
	volumes = []corev1.Volume{{Name: s.Volume, VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: s.Claim}}}}
	return env, mounts, volumes, true
}

// GCSStoreDecl is what a cluster spec's gcsFaultToleranceOptions declares of the embedded store
// (KubeRay v1.7.0): backend ("redis" when unset) and storage.claimName ("" when the operator
// makes its own claim). doctor -f reads it from the document, which the API types cannot hold.
type GCSStoreDecl struct {
	Backend   string `json:"backend,omitempty"`
	ClaimName string `json:"claimName,omitempty"`
}

// OwnClaim is the claim KubeRay v1.7.0 makes for a cluster's store when storage.claimName is
// unset (utils.GetGCSStoragePVCName): one per cluster, never shared.
func OwnClaim(cluster string) string { return cluster + "-gcs-pvc" }
