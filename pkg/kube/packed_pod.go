package kube

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// packedPod is how the long-running modes cache a Ray pod: its trimmed state in protobuf, and
// beside it the four strings the informer's keys, indexes and handlers read. A watchdog holds
// every Ray pod of the cluster for as long as it runs, and a trimmed corev1.Pod is still about
// 1.9 kB in memory (the struct alone is 1,240 bytes before any field is set); its encoding is
// about 700 bytes. A RayCluster's few pods are decoded when it is examined, a few microseconds
// each (docs/performance.md, the watchdog's memory).
type packedPod struct {
	namespace, name string
	cluster, node   string // the ray.io/cluster label and spec.nodeName
	wire            []byte
}

// packPod encodes p, already trimmed. A pod that does not encode (no pod the API server sent
// fails to) is kept as it is, so nothing is lost.
func packPod(p *corev1.Pod) any {
	wire, err := p.Marshal()
	if err != nil {
		return p
	}
	return &packedPod{namespace: p.Namespace, name: p.Name, cluster: p.Labels[ray.LabelCluster], node: p.Spec.NodeName, wire: wire}
}

// GetObjectMeta makes a packed pod's key the pod's (meta.Accessor, and so the informer's
// namespace/name key function, read it through this).
func (p *packedPod) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: p.namespace, Name: p.name}
}

// cachedPod is the pod an informer stored (packed or not, or the last state of a delete the
// watch missed), decoded; nil when obj is no pod.
func cachedPod(obj any) *corev1.Pod {
	switch o := storedObject(obj).(type) {
	case *packedPod:
		p := &corev1.Pod{}
		if err := p.Unmarshal(o.wire); err != nil {
			return nil // it was encoded by packPod from a pod: not reached
		}
		return p
	case *corev1.Pod:
		return o
	}
	return nil
}

// podPlace is where a cached pod belongs without decoding it: its RayCluster's key (ok false
// without a ray.io/cluster label) and its node.
func podPlace(obj any) (cluster types.NamespacedName, node string, ok bool) {
	switch o := storedObject(obj).(type) {
	case *packedPod:
		return types.NamespacedName{Namespace: o.namespace, Name: o.cluster}, o.node, o.cluster != ""
	case *corev1.Pod:
		c := o.Labels[ray.LabelCluster]
		return types.NamespacedName{Namespace: o.Namespace, Name: c}, o.Spec.NodeName, c != ""
	}
	return types.NamespacedName{}, "", false
}
