package pressure

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// headPod is a Running KubeRay head with a ray-head container and a sidecar.
func headPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "raycluster-demo-head-x7k2p", Namespace: "ml", Labels: map[string]string{
			"ray.io/cluster": "raycluster-demo", "ray.io/node-type": "head", "ray.io/is-ray-node": "yes",
		}},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{
			{Name: "autoscaler"},
			{Name: "ray-head", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				corev1.ResourceMemory:           resource.MustParse("8Gi"),
				corev1.ResourceEphemeralStorage: resource.MustParse("10Gi"),
			}}},
		}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "autoscaler", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			{Name: "ray-head", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		}},
	}
}
