package play

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// Pressure is a node condition the kubelet's eviction manager sets.
type Pressure corev1.NodeConditionType

const (
	DiskPressure   = Pressure(corev1.NodeDiskPressure)
	MemoryPressure = Pressure(corev1.NodeMemoryPressure)
	PIDPressure    = Pressure(corev1.NodePIDPressure)
)

var pressureTaint = map[Pressure]string{
	DiskPressure:   "node.kubernetes.io/disk-pressure",
	MemoryPressure: "node.kubernetes.io/memory-pressure",
	PIDPressure:    "node.kubernetes.io/pid-pressure",
}

// KubeletNodePressure writes what the kubelet and the node lifecycle controller show for a node
// under pressure: the condition True and its NoSchedule taint. kwok's heartbeat stage only renews
// the Ready condition's timestamps, so the pressure condition stays until the test lifts it.
func KubeletNodePressure(ctx context.Context, c kubernetes.Interface, node string, p Pressure) error {
	n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	now := metav1.Now()
	setNodeCondition(n, corev1.NodeCondition{Type: corev1.NodeConditionType(p), Status: corev1.ConditionTrue,
		Reason: "KubeletHas" + string(p), Message: fmt.Sprintf("kubelet has %s", p), LastHeartbeatTime: now, LastTransitionTime: now})
	if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		return err
	}
	n, err = c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: pressureTaint[p], Effect: corev1.TaintEffectNoSchedule, TimeAdded: &now})
	_, err = c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	return err
}

// NodeLost creates a node no kwok manages (nothing heartbeats it) whose Ready condition reads
// Unknown, as after its kubelet stopped posting status; the node lifecycle controller then taints
// it unreachable. Pods can be bound to it with NodeName.
func NodeLost(ctx context.Context, c kubernetes.Interface, name string) (*corev1.Node, error) {
	n := sandbox.FakeNode(name, false)
	created, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	old := metav1.NewTime(metav1.Now().Add(-10 * 60 * 1e9))
	setNodeCondition(created, corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
		Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status.", LastHeartbeatTime: old, LastTransitionTime: old})
	return c.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
}

func setNodeCondition(n *corev1.Node, cond corev1.NodeCondition) {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == cond.Type {
			n.Status.Conditions[i] = cond
			return
		}
	}
	n.Status.Conditions = append(n.Status.Conditions, cond)
}
