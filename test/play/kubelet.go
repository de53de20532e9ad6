// Package play plays, through the API, the parts of a real cluster the sandbox lacks: the kubelet
// (evictions, crash loops, node pressure) and a lost node. Every function is named for what it
// stands in for, and writes what that component would write; tests that call one say so.
package play

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// KubeletEvict writes what the kubelet writes when node pressure evicts a pod, as the sandbox's
// real node showed it (kubelet 1.34, docs/sandbox.md): phase Failed, reason Evicted, the "low on
// resource" message with the threshold as configured and the available amount in Ki, a
// DisruptionTarget condition with reason TerminationByKubelet, PodReadyToStartContainers False,
// its containers terminated, a running ephemeral container back to waiting ContainerCreating,
// and the kubelet's Evicted Event. The pod object stays, as after a real node-pressure eviction
// (compare shared/seeds/000). resource is "ephemeral-storage" or "memory".
//
// The container states are one of the real kubelet's variants, seed 000's: ContainerStatusUnknown,
// exit 137, restartCount up by one. A container SIGKILLed after the grace period instead ends
// terminated Error 137 with its real times; the rules read the phase and the reason, not these.
func KubeletEvict(ctx context.Context, c kubernetes.Interface, ns, name, resource string) (*corev1.Pod, error) {
	pod, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	now := metav1.Now()
	msg := EvictionMessage(resource)
	if len(pod.Spec.Containers) > 0 {
		msg += fmt.Sprintf("Container %s was using 52Ki, request is 0, has larger consumption of %s. ", pod.Spec.Containers[0].Name, resource)
	}
	pod.Status.Phase = corev1.PodFailed
	pod.Status.Reason = "Evicted"
	pod.Status.Message = msg
	setPodCondition(pod, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "TerminationByKubelet", Message: msg, LastTransitionTime: now})
	setPodCondition(pod, corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse, LastTransitionTime: now})
	setPodCondition(pod, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodFailed", LastTransitionTime: now})
	setPodCondition(pod, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "PodFailed", LastTransitionTime: now})
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		cs.Ready = false
		cs.Started = boolPtr(false)
		cs.RestartCount++
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "ContainerStatusUnknown",
			Message:   "The container could not be located when the pod was terminated",
			StartedAt: startedAt(cs), FinishedAt: now,
		}}
	}
	for i := range pod.Status.EphemeralContainerStatuses {
		cs := &pod.Status.EphemeralContainerStatuses[i]
		if cs.State.Running == nil {
			continue // a finished ephemeral container is left as it was
		}
		cs.RestartCount++
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "ContainerStatusUnknown",
			Message: "The container could not be located when the pod was deleted.  The container used to be Running"}}
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	}
	// The kubelet's eviction manager records the Evicted Event when it evicts (evictPod), before
	// the pod is killed and its status manager writes the Failed phase: a watcher that reacts to
	// the phase finds the Event already there.
	if err := kubeletEvent(ctx, c, pod, corev1.EventTypeWarning, "Evicted", msg); err != nil {
		return nil, err
	}
	return c.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
}

// kubeletEvent records an Event about pod as the kubelet of its node does.
func kubeletEvent(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, typ, reason, msg string) error {
	now := metav1.Now()
	_, err := c.CoreV1().Events(pod.Namespace).Create(ctx, &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
			UID: pod.UID, ResourceVersion: pod.ResourceVersion},
		Reason: reason, Message: msg, Type: typ, Count: 1, FirstTimestamp: now, LastTimestamp: now,
		Source: corev1.EventSource{Component: "kubelet", Host: pod.Spec.NodeName},
	}, metav1.CreateOptions{})
	return err
}

// KubeletCrashLoop writes what the kubelet shows for a container that keeps dying, as the real
// node showed it: waiting in CrashLoopBackOff with the kubelet's back-off message (10s doubling
// per restart, up to 5m), last terminated with reason (e.g. "OOMKilled", exit 137, or "Error",
// exit 1) about a second after it started, restartCount raised, Ready and ContainersReady False
// naming the container. The pod stays Running.
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
	unready := ""
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		if i > 0 {
			break // the Ray container is the first; sidecars keep running
		}
		unready = cs.Name
		cs.Ready = false
		cs.Started = boolPtr(false)
		cs.RestartCount = restarts
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, Reason: reason, StartedAt: metav1.NewTime(now.Add(-time.Second)), FinishedAt: now,
			ContainerID: cs.ContainerID,
		}}
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "CrashLoopBackOff", Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", backOff(restarts), cs.Name, name, ns, pod.UID),
		}}
	}
	unreadyMsg := fmt.Sprintf("containers with unready status: [%s]", unready)
	setPodCondition(pod, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: unreadyMsg, LastTransitionTime: now})
	setPodCondition(pod, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: unreadyMsg, LastTransitionTime: now})
	return c.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
}

// backOff is the kubelet's crash-loop back-off after restarts restarts: 10s, doubling, at most 5m.
func backOff(restarts int32) string {
	d := 10 * time.Second
	for i := int32(1); i < restarts && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute).String()
}

// KubeletImagePullBackOff writes what the kubelet shows when the image cannot be pulled, as the
// real node showed it: waiting ImagePullBackOff with `Back-off pulling image "X": ErrImagePull:
// <the pull error>`, Ready and ContainersReady False naming the container. It leaves the phase:
// the real kubelet's pod is Pending (its container never ran), while the tests play this on a pod
// kwok already made Running.
func KubeletImagePullBackOff(ctx context.Context, c kubernetes.Interface, ns, name string) (*corev1.Pod, error) {
	pod, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if len(pod.Status.ContainerStatuses) > 0 {
		cs := &pod.Status.ContainerStatuses[0]
		cs.Ready = false
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "ImagePullBackOff", Message: fmt.Sprintf("Back-off pulling image %q: ErrImagePull: failed to pull and unpack image %q: failed to resolve reference %q: not found", cs.Image, cs.Image, cs.Image),
		}}
		msg := fmt.Sprintf("containers with unready status: [%s]", cs.Name)
		setPodCondition(pod, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: msg, LastTransitionTime: metav1.Now()})
		setPodCondition(pod, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: msg, LastTransitionTime: metav1.Now()})
	}
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
	var names []string
	for i := range pod.Status.ContainerStatuses {
		pod.Status.ContainerStatuses[i].Ready = false
		names = append(names, pod.Status.ContainerStatuses[i].Name)
	}
	msg := fmt.Sprintf("containers with unready status: [%s]", strings.Join(names, " "))
	setPodCondition(pod, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: msg, LastTransitionTime: now})
	setPodCondition(pod, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: msg, LastTransitionTime: now})
	return c.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
}

// KubeletInitWaiting writes a pod whose first init container runs and never completes, as a
// kubelet shows a Ray worker whose wait-gcs-ready cannot reach its head: Pending, Initialized
// False, the Ray container waiting PodInitializing. The pod IP stays (a kubelet assigns it before
// init containers run), which also keeps kwok from starting the pod again.
func KubeletInitWaiting(ctx context.Context, c kubernetes.Interface, ns, name string) (*corev1.Pod, error) {
	pod, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if len(pod.Spec.InitContainers) == 0 {
		return nil, fmt.Errorf("pod %s/%s has no init container to keep waiting", ns, name)
	}
	now := metav1.Now()
	pod.Status.Phase = corev1.PodPending
	pod.Status.InitContainerStatuses = nil
	for i, ic := range pod.Spec.InitContainers {
		cs := corev1.ContainerStatus{Name: ic.Name, Image: ic.Image, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}
		if i == 0 {
			cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
			cs.Started = boolPtr(true)
		}
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, cs)
	}
	pod.Status.ContainerStatuses = nil
	for _, ct := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: ct.Name, Image: ct.Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}, Started: boolPtr(false)})
	}
	msg := fmt.Sprintf("containers with incomplete status: [%s]", pod.Spec.InitContainers[0].Name)
	setPodCondition(pod, corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionFalse, Reason: "ContainersNotInitialized", Message: msg, LastTransitionTime: now})
	setPodCondition(pod, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status", LastTransitionTime: now})
	setPodCondition(pod, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status", LastTransitionTime: now})
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
