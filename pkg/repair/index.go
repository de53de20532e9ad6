package repair

import (
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// index looks objects up in a snapshot by name.
type index struct {
	s        *state.Snapshot
	clusters map[types.NamespacedName]*rayv1.RayCluster
	pods     map[types.NamespacedName]*corev1.Pod
	nodes    map[string]*corev1.Node
}

func newIndex(s *state.Snapshot) *index {
	ix := &index{
		s:        s,
		clusters: map[types.NamespacedName]*rayv1.RayCluster{},
		pods:     map[types.NamespacedName]*corev1.Pod{},
		nodes:    map[string]*corev1.Node{},
	}
	for i := range s.Clusters {
		c := &s.Clusters[i]
		ix.clusters[types.NamespacedName{Namespace: c.Namespace, Name: c.Name}] = c
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		ix.pods[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = p
	}
	for i := range s.Nodes {
		ix.nodes[s.Nodes[i].Name] = &s.Nodes[i]
	}
	return ix
}

// cluster is the finding's RayCluster, or the one the pod's ray.io/cluster label names.
func (ix *index) cluster(ref state.Ref, pod *corev1.Pod) *rayv1.RayCluster {
	ns, name := ref.Namespace, ref.Name
	if pod != nil {
		if ns == "" {
			ns = pod.Namespace
		}
		if name == "" {
			name = pod.Labels[ray.LabelCluster]
		}
		if ns != pod.Namespace || name != pod.Labels[ray.LabelCluster] {
			return nil // a pod of another cluster is never healed under this finding
		}
	}
	return ix.clusters[types.NamespacedName{Namespace: ns, Name: name}]
}

// findingPod is the pod a finding is about, as the snapshot holds it, or why there is none.
func (ix *index) findingPod(f diagnose.Finding) (*corev1.Pod, string) {
	o := f.Object
	if o.Kind != "" && o.Kind != "Pod" {
		return nil, fmt.Sprintf("the finding names a %s, not a pod", o.Kind)
	}
	ns := o.Namespace
	if ns == "" {
		ns = f.Cluster.Namespace
	}
	pod := ix.pods[types.NamespacedName{Namespace: ns, Name: o.Name}]
	if pod == nil {
		return nil, "the pod is not in the snapshot"
	}
	if o.UID != "" && string(pod.UID) != o.UID {
		return nil, "the pod was replaced since the finding was made"
	}
	return pod, ""
}

// heads are the snapshot's head pods labelled as belonging to the cluster.
func (ix *index) heads(ref state.Ref) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range ix.s.Pods {
		p := &ix.s.Pods[i]
		if p.Namespace == ref.Namespace && p.Labels[ray.LabelCluster] == ref.Name && ray.IsHead(p) {
			out = append(out, p)
		}
	}
	return out
}
