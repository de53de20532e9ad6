package play

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// Pressure is a node condition the kubelet's eviction manager sets.
type Pressure corev1.NodeConditionType

const (
	DiskPressure   = Pressure(corev1.NodeDiskPressure)
	MemoryPressure = Pressure(corev1.NodeMemoryPressure)
	PIDPressure    = Pressure(corev1.NodePIDPressure)
)

// KubeletNodePressure writes what the kubelet's eviction manager reports for a node under
// pressure: the condition True. The real node lifecycle controller then adds the matching
// NoSchedule taint (node.kubernetes.io/disk-pressure, ...), as in a cluster. kwok's heartbeat
// rewrites node conditions only every ~10 minutes, so the condition holds for a test's length.
// Retries on conflict: kwok and the node controller write the same node.
func KubeletNodePressure(ctx context.Context, c kubernetes.Interface, node string, p Pressure) error {
	w := kubeletWords[p]
	return setNodeConditionStatus(ctx, c, node, corev1.NodeConditionType(p), corev1.ConditionTrue, w[0], w[1])
}

// KubeletNodePressureRelieved writes the condition False again, as the kubelet does once usage
// falls under the threshold.
func KubeletNodePressureRelieved(ctx context.Context, c kubernetes.Interface, node string, p Pressure) error {
	w := kubeletWords[p]
	return setNodeConditionStatus(ctx, c, node, corev1.NodeConditionType(p), corev1.ConditionFalse, w[2], w[3])
}

// kubeletWords are the kubelet's own reason and message for each pressure condition:
// {reason when True, message when True, reason when False, message when False}.
var kubeletWords = map[Pressure][4]string{
	DiskPressure:   {"KubeletHasDiskPressure", "kubelet has disk pressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
	MemoryPressure: {"KubeletHasInsufficientMemory", "kubelet has insufficient memory available", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
	PIDPressure:    {"KubeletHasInsufficientPID", "kubelet has insufficient PID available", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
}

func setNodeConditionStatus(ctx context.Context, c kubernetes.Interface, node string, t corev1.NodeConditionType, status corev1.ConditionStatus, reason, message string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		setNodeCondition(n, corev1.NodeCondition{Type: t, Status: status, Reason: reason,
			Message: message, LastHeartbeatTime: now, LastTransitionTime: now})
		_, err = c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
}

// NodeLost creates a node no kwok manages (nothing heartbeats it) whose Ready condition reads
// Unknown, as after its kubelet stopped posting status; the node lifecycle controller then taints
// it unreachable. Pods can be bound to it with NodeName.
func NodeLost(ctx context.Context, c kubernetes.Interface, name string) (*corev1.Node, error) {
	n := sandbox.FakeNode(name, false)
	// Only pods bound to it by name land here: the scheduler must not place other tests' pods on
	// a node nobody runs. The node lifecycle controller owns the unreachable taint and swaps it
	// as it reads the node's conditions; once in CI (2026-12-04) a worker of another test was
	// scheduled here in that moment. The second taint is nobody's but the tests': it stays.
	n.Spec.Taints = []corev1.Taint{{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoSchedule},
		{Key: "e2e.kubectl-ray.io/dedicated", Value: "lost", Effect: corev1.TaintEffectNoSchedule}}
	if _, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	// The node lifecycle controller writes the new node too: re-read and retry on conflict.
	var lost *corev1.Node
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		old := metav1.NewTime(metav1.Now().Add(-10 * time.Minute))
		setNodeCondition(n, corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
			Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status.", LastHeartbeatTime: old, LastTransitionTime: old})
		lost, err = c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	return lost, err
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
