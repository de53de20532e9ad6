package diagnose

import (
	corev1 "k8s.io/api/core/v1"
)

const taintUnreachable = "node.kubernetes.io/unreachable"

func nodeCondition(n *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// nodeReadiness says "NotReady" or "unreachable" (the node controller's Unknown: the kubelet
// stopped reporting), or "" for a Ready node.
func nodeReadiness(n *corev1.Node) string {
	for _, t := range n.Spec.Taints {
		if t.Key == taintUnreachable {
			return "unreachable"
		}
	}
	c := nodeCondition(n, corev1.NodeReady)
	switch {
	case c == nil:
		return ""
	case c.Status == corev1.ConditionUnknown:
		return "unreachable"
	case c.Status == corev1.ConditionFalse:
		return "NotReady"
	}
	return ""
}

// nodePressures lists the pressure conditions that are True, in a fixed order.
func nodePressures(n *corev1.Node) []string {
	var out []string
	for _, t := range []corev1.NodeConditionType{corev1.NodeDiskPressure, corev1.NodeMemoryPressure, corev1.NodePIDPressure} {
		if c := nodeCondition(n, t); c != nil && c.Status == corev1.ConditionTrue {
			out = append(out, string(t))
		}
	}
	return out
}
