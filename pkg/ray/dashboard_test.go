package ray

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestDashboardPort(t *testing.T) {
	withPorts := func(ports ...corev1.ContainerPort) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head", Ports: ports}}}}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want int
	}{
		{"no ports: Ray's default", withPorts(), DefaultDashboardPort},
		{"other ports only", withPorts(corev1.ContainerPort{Name: "gcs-server", ContainerPort: 6379}), DefaultDashboardPort},
		{"the port KubeRay names dashboard", withPorts(corev1.ContainerPort{Name: "gcs-server", ContainerPort: 6379}, corev1.ContainerPort{Name: "dashboard", ContainerPort: 9265}), 9265},
	} {
		if got := DashboardPort(tc.pod); got != tc.want {
			t.Errorf("%s: DashboardPort = %d, want %d", tc.name, got, tc.want)
		}
	}
}
