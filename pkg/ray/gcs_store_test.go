package ray

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestGCSStoreOf(t *testing.T) {
	pod := func(env []corev1.EnvVar, mounts []corev1.VolumeMount, claim string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "ray-head", Env: env, VolumeMounts: mounts}},
			Volumes: []corev1.Volume{{Name: "logs"}, {Name: GCSStorageVolume, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}},
		}}
	}
	rocks := []corev1.EnvVar{{Name: EnvGCSStorage, Value: "rocksdb"}, {Name: EnvGCSStoragePath, Value: "/data/gcs"}}
	mount := []corev1.VolumeMount{{Name: "logs", MountPath: "/tmp/ray"}, {Name: GCSStorageVolume, MountPath: "/data/gcs"}}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want GCSStore
		ok   bool
	}{
		{"KubeRay v1.7.0's head", pod(rocks, mount, "c-gcs-pvc"), GCSStore{Claim: "c-gcs-pvc", Volume: GCSStorageVolume}, true},
		{"subPath", pod(rocks, []corev1.VolumeMount{{Name: GCSStorageVolume, MountPath: "/data/gcs/", SubPath: "/clusters/a/"}}, "shared"),
			GCSStore{Claim: "shared", Dir: "clusters/a", Volume: GCSStorageVolume}, true},
		{"a path below the mount", pod([]corev1.EnvVar{{Name: EnvGCSStorage, Value: "rocksdb"}, {Name: EnvGCSStoragePath, Value: "/data/gcs/x"}},
			[]corev1.VolumeMount{{Name: GCSStorageVolume, MountPath: "/data"}}, "shared"), GCSStore{Claim: "shared", Dir: "gcs/x", Volume: GCSStorageVolume}, true},
		{"default path", pod(rocks[:1], mount, "p"), GCSStore{Claim: "p", Volume: GCSStorageVolume}, true},
		{"Redis", pod(nil, mount, "p"), GCSStore{}, false},
		{"not mounted", pod(rocks, mount[:1], "p"), GCSStore{}, false},
		{"a mount elsewhere only", pod(rocks, []corev1.VolumeMount{{Name: GCSStorageVolume, MountPath: "/data/gcsx"}}, "p"), GCSStore{}, false},
		{"no container", &corev1.Pod{}, GCSStore{}, false},
	} {
		got, ok := GCSStoreOf(tc.pod)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: got %+v %v, want %+v %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	// What a trimmed pod keeps of it says the same.
	p := pod(append(rocks, corev1.EnvVar{Name: "OTHER", Value: "x"}), mount, "c-gcs-pvc")
	env, mounts, volumes, ok := GCSStoreSpec(p)
	if !ok || len(env) != 2 || len(mounts) != 1 || len(volumes) != 1 {
		t.Fatalf("GCSStoreSpec: %v %v %v %v", env, mounts, volumes, ok)
	}
	kept := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Env: env, VolumeMounts: mounts}}, Volumes: volumes}}
	if got, _ := GCSStoreOf(kept); got != (GCSStore{Claim: "c-gcs-pvc", Volume: GCSStorageVolume}) {
		t.Errorf("trimmed: %+v", got)
	}
}
