package ray

import corev1 "k8s.io/api/core/v1"

// What NodeReadiness says about a node.
const (
	// NodeReady: the kubelet reports Ready=True and the node has no unreachable taint.
	NodeReady = ""
	// NodeNotReady: the kubelet reports Ready=False.
	NodeNotReady = "NotReady"
	// NodeUnreachable: the node controller set Ready=Unknown or the unreachable taint, because
	// the kubelet stopped reporting.
	NodeUnreachable = "unreachable"
	// NodeUnreported: the node has no Ready condition (or one with a status Kubernetes does not
	// define): its kubelet has not reported yet, as on a node that just registered.
	NodeUnreported = "unreported"
)

// NodeReadiness says whether n is Ready, and if not, how.
//
// A node with no Ready condition is NodeUnreported, neither Ready nor down. This is the one
// answer safe for both readers. Before there was one function, doctor counted such a node as
// Ready and heal as "unknown". Nothing shows the node is down, so heal --force must not
// force-delete on it: a kubelet that is only starting may still be running the pod. Nothing
// shows it is broken either, so doctor does not flag it: a node that just registered has not
// reported yet. It is still not Ready, so no reader may treat it as Ready. Use NodeDown for
// "may a stuck pod on it be force-deleted".
func NodeReadiness(n *corev1.Node) string {
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeUnreachable {
			return NodeUnreachable
		}
	}
	c := nodeCondition(n, corev1.NodeReady)
	if c == nil {
		return NodeUnreported
	}
	switch c.Status {
	case corev1.ConditionTrue:
		return NodeReady
	case corev1.ConditionFalse:
		return NodeNotReady
	case corev1.ConditionUnknown:
		return NodeUnreachable
	}
	return NodeUnreported
}

// NodeDown reports whether readiness (from NodeReadiness) shows the node is down: NotReady or
// unreachable, so its kubelet will not finish deleting the pods on it.
func NodeDown(readiness string) bool {
	return readiness == NodeNotReady || readiness == NodeUnreachable
}

// NodePressures lists n's pressure conditions that are True, in a fixed order: DiskPressure,
// MemoryPressure, PIDPressure.
func NodePressures(n *corev1.Node) []string {
	var out []string
	for _, t := range []corev1.NodeConditionType{corev1.NodeDiskPressure, corev1.NodeMemoryPressure, corev1.NodePIDPressure} {
		if c := nodeCondition(n, t); c != nil && c.Status == corev1.ConditionTrue {
			out = append(out, string(t))
		}
	}
	return out
}

func nodeCondition(n *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}
