package raytest

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// ReadyPod is a Running, Ready Ray pod of RayCluster demo in namespace ml, with KubeRay's labels
// for role (head or worker) and group, on node; its uid is "uid-" + name.
func ReadyPod(name, role, group, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, UID: types.UID("uid-" + name),
		Labels: map[string]string{ray.LabelIsRayNode: "yes", ray.LabelCluster: "demo", ray.LabelNodeType: role, ray.LabelGroup: group}},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
}
