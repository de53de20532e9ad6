// Package play plays, through the API, the parts of a real cluster the sandbox lacks: the kubelet
// (evictions, crash loops, node pressure) and a lost node. Every function is named for what it
// stands in for, and writes what that component would write; tests that call one say so.
package play

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// KubeletEvict writes what the kubelet writes when node pressure evicts a pod: phase Failed,
// reason Evicted, the "low on resource" message, a DisruptionTarget condition with reason
// TerminationByKubelet, and its containers terminated (ContainerStatusUnknown, exit 137). The pod
// object stays, as after a real node-pressure eviction (compare shared/seeds/000).
// resource is "ephemeral-storage" or "memory".
func KubeletEvict(ctx context.Context, c kubernetes.Interface, ns, name, resource string) (*corev1.Pod, error) {
	pod, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	now := metav1.Now()
	msg := fmt.Sprintf("The node was low on resource: %s. Threshold quantity: 10%%, available: 2%%. ", resource)
	if len(pod.Spec.Containers) > 0 {
		msg += fmt.Sprintf("Container %s was using 12Gi, request is 0, has larger consumption of %s. ", pod.Spec.Containers[0].Name, resource)
	}
	pod.Status.Phase = corev1.PodFailed
	pod.Status.Reason = "Evicted"
	pod.Status.Message = msg
	setPodCondition(pod, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "TerminationByKubelet", Message: msg, LastTransitionTime: now})
	setPodCondition(pod, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodFailed", LastTransitionTime: now})
	setPodCondition(pod, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "PodFailed", LastTransitionTime: now})
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		cs.Ready = false
		cs.Started = boolPtr(false)
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "ContainerStatusUnknown",
			Message:   "The container could not be located when the pod was terminated",
			StartedAt: startedAt(cs), FinishedAt: now,
		}}
	}
	return c.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
}

// KubeletCrashLoop writes what the kubelet shows for a container that keeps dying: waiting in
// CrashLoopBackOff, last terminated with reason (e.g. "OOMKilled", exit 137, or "Error", exit 1),
// restartCount raised. The pod stays Running and not Ready.
func KubeletCrashLoop(ctx context.Context, c kubernetes.Interface, ns, name, reason string, restarts int32) (*corev1.Pod, error) {
	pod, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	exitCode := int32(1)
	if reason == "OOMKilled" {
		exitCode = 137
	}
	now := metav1.Now()
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		if i > 0 {
			break // the Ray container is the first; sidecars keep running
		}
		cs.Ready = false
		cs.Started = boolPtr(false)
		cs.RestartCount = restarts
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, Reason: reason, StartedAt: metav1.NewTime(now.Add(-30 * time.Second)), FinishedAt: now,
		}}
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "CrashLoopBackOff", Message: fmt.Sprintf("back-off 5m0s restarting failed container=%s pod=%s", cs.Name, name),
		}}
	}
	setPodCondition(pod, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: now})
	setPodCondition(pod, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: now})
	return c.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
}

// KubeletImagePullBackOff writes what the kubelet shows when the image cannot be pulled.
func KubeletImagePullBackOff(ctx context.Context, c kubernetes.Interface, ns, name string) (*corev1.Pod, error) {
	pod, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if len(pod.Status.ContainerStatuses) > 0 {
		cs := &pod.Status.ContainerStatuses[0]
		cs.Ready = false
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "ImagePullBackOff", Message: fmt.Sprintf("Back-off pulling image %q", cs.Image),
		}}
	}
	setPodCondition(pod, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: metav1.Now()})
	return c.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
}

// KubeletPodNotReady writes a Running pod whose readiness probe fails (e.g. a worker that has
// not rejoined a restarted head's GCS).
func KubeletPodNotReady(ctx context.Context, c kubernetes.Interface, ns, name string) (*corev1.Pod, error) {
	pod, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	now := metav1.Now()
	for i := range pod.Status.ContainerStatuses {
		pod.Status.ContainerStatuses[i].Ready = false
	}
	setPodCondition(pod, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: now})
	setPodCondition(pod, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: now})
	return c.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
}

func setPodCondition(pod *corev1.Pod, cond corev1.PodCondition) {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == cond.Type {
			pod.Status.Conditions[i] = cond
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, cond)
}

func startedAt(cs *corev1.ContainerStatus) metav1.Time {
	if cs.State.Running != nil {
		return cs.State.Running.StartedAt
	}
	return metav1.Now()
}

func boolPtr(b bool) *bool { return &b }
