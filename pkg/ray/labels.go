package ray

import corev1 "k8s.io/api/core/v1"

// Labels KubeRay puts on the pods and Services it creates (ray-operator
// controllers/ray/utils/constant.go; the same keys from v1.0 to v1.5).
const (
	LabelCluster   = "ray.io/cluster"
	LabelNodeType  = "ray.io/node-type"
	LabelIsRayNode = "ray.io/is-ray-node"
	LabelGroup     = "ray.io/group"
	// LabelServe is on the serve Service (its value names it) and, set to "true", on the pods
	// that Service sends traffic to.
	LabelServe = "ray.io/serve"

	// LabelCreatedBy, set to ComponentKubeRay, is on what KubeRay creates beside pods and Services
	// (its NetworkPolicies since v1.7.0).
	LabelCreatedBy   = "app.kubernetes.io/created-by"
	ComponentKubeRay = "kuberay-operator"

	NodeTypeHead   = "head"
	NodeTypeWorker = "worker"

	// RayPodSelector selects every pod KubeRay made, for the one paged LIST of pods.
	RayPodSelector = LabelIsRayNode + "=yes"
)

// HeadSelector is the label selector of the head pods of the RayCluster named cluster.
func HeadSelector(cluster string) string {
	return LabelCluster + "=" + cluster + "," + LabelNodeType + "=" + NodeTypeHead
}

// IsRayPod reports whether KubeRay made p.
func IsRayPod(p *corev1.Pod) bool {
	return p.Labels[LabelIsRayNode] == "yes"
}

// IsHead reports whether p carries the head's node-type label. It does not check IsRayPod:
// pods read through RayPodSelector or HeadSelector are Ray pods already; a caller that got p
// any other way and is about to act on it checks both.
func IsHead(p *corev1.Pod) bool {
	return p.Labels[LabelNodeType] == NodeTypeHead
}

// IsWorker reports whether p carries the worker's node-type label (see IsHead).
func IsWorker(p *corev1.Pod) bool {
	return p.Labels[LabelNodeType] == NodeTypeWorker
}
