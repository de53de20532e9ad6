package repair

import (
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

var t0 = time.Date(2024, 5, 8, 7, 55, 30, 0, time.UTC)

func cluster(ns, name string) rayv1.RayCluster {
	return rayv1.RayCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayCluster"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
	}
}

// head is a Running, Ready head pod controlled by c.
func head(c rayv1.RayCluster, name string) corev1.Pod {
	yes := true
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: c.Namespace, Name: name, UID: types.UID("uid-" + name), ResourceVersion: "100",
			Labels: map[string]string{
				ray.LabelCluster: c.Name, ray.LabelNodeType: ray.NodeTypeHead, ray.LabelIsRayNode: "yes",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "ray.io/v1", Kind: "RayCluster", Name: c.Name, UID: c.UID, Controller: &yes,
			}},
		},
		Spec: corev1.PodSpec{NodeName: "node-a", RestartPolicy: corev1.RestartPolicyAlways},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
}

// evicted turns p into what the kubelet leaves after a node-pressure eviction (seed 000).
func evicted(p corev1.Pod) corev1.Pod {
	p.Status = corev1.PodStatus{
		Phase:   corev1.PodFailed,
		Reason:  "Evicted",
		Message: "The node was low on resource: memory. Threshold quantity: 1Gi, available: 991045Ki. ",
		Conditions: []corev1.PodCondition{
			{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet"},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse},
		},
	}
	return p
}

func terminating(p corev1.Pod, node string) corev1.Pod {
	ts := metav1.NewTime(t0.Add(-time.Hour))
	p.DeletionTimestamp = &ts
	p.Spec.NodeName = node
	return p
}

func node(name string, ready corev1.ConditionStatus) corev1.Node {
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}},
	}
}

func finding(rule string, c rayv1.RayCluster, p *corev1.Pod) diagnose.Finding {
	f := diagnose.Finding{
		Rule:    rule,
		Cluster: state.Ref{Kind: "RayCluster", Namespace: c.Namespace, Name: c.Name, UID: string(c.UID)},
		Object:  state.Ref{Kind: "RayCluster", Namespace: c.Namespace, Name: c.Name, UID: string(c.UID)},
	}
	if p != nil {
		f.Object = state.Ref{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: string(p.UID)}
	}
	return f
}
