package state

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
)

// Ref names a Kubernetes object in a finding or an action.
type Ref struct {
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
}

// ClusterRef names rc in a finding or an action.
func ClusterRef(rc *rayv1.RayCluster) Ref {
	return Ref{Kind: "RayCluster", Namespace: rc.Namespace, Name: rc.Name, UID: string(rc.UID)}
}

// PodRef names p in a finding or an action.
func PodRef(p *corev1.Pod) Ref {
	return Ref{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: string(p.UID)}
}
