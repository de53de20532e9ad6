package e2e

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The kubelet's reports on one pod, played through the API where no kubelet runs the container
// (kwok marks pods Running and Ready and runs nothing).

// kubeletContainerExited plays a second container of a running pod (not Ray's) exiting with code:
// its state Terminated, the pod no longer Ready. Under restartPolicy Never the kubelet leaves it so.
func (h *H) kubeletContainerExited(pod, container string, code int32) {
	h.T.Helper()
	h.playStatus(pod, func(p *corev1.Pod, now metav1.Time) {
		for i := range p.Status.ContainerStatuses {
			if cs := &p.Status.ContainerStatuses[i]; cs.Name == container {
				cs.Ready = false
				cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error", StartedAt: now, FinishedAt: now}}
			}
		}
		notReady(p, now)
	})
}

// kubeletInitFailed plays an init container exiting with code under restartPolicy Never: the
// kubelet runs no other container and puts the pod in phase Failed.
func (h *H) kubeletInitFailed(pod, container string, code int32) {
	h.T.Helper()
	h.playStatus(pod, func(p *corev1.Pod, now metav1.Time) {
		p.Status.Phase = corev1.PodFailed
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: container, Image: p.Spec.InitContainers[len(p.Spec.InitContainers)-1].Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error", StartedAt: now, FinishedAt: now}}}}
		for i := range p.Status.ContainerStatuses {
			cs := &p.Status.ContainerStatuses[i]
			cs.Ready, cs.State = false, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
		}
		notReady(p, now)
	})
}

// kubeletNotReady plays a readiness probe that fails on a running pod: its containers run, the
// pod is not Ready.
func (h *H) kubeletNotReady(pod string) {
	h.T.Helper()
	h.playStatus(pod, func(p *corev1.Pod, now metav1.Time) {
		for i := range p.Status.ContainerStatuses {
			p.Status.ContainerStatuses[i].Ready = false
		}
		notReady(p, now)
	})
}

// playStatus writes the status change of one pod.
func (h *H) playStatus(name string, change func(*corev1.Pod, metav1.Time)) {
	h.T.Helper()
	pod, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	change(pod, metav1.Now())
	if _, err := h.Kube.CoreV1().Pods(h.NS).UpdateStatus(h.Ctx, pod, metav1.UpdateOptions{}); err != nil {
		h.T.Fatal(err)
	}
}

// notReady sets the pod's Ready and ContainersReady conditions False.
func notReady(p *corev1.Pod, now metav1.Time) {
	for i := range p.Status.Conditions {
		if c := &p.Status.Conditions[i]; c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			c.Status, c.Reason, c.LastTransitionTime = corev1.ConditionFalse, "ContainersNotReady", now
		}
	}
}
