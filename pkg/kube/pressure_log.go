package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// ContainerLog is the start of a container's log, at most limit bytes: the pressure runner reads
// its own script's lines there (the memory ramp), which the kubelet does not copy anywhere else
// while the container runs.
func (c *Clients) ContainerLog(ctx context.Context, namespace, pod, container string, limit int64) (string, error) {
	b, err := c.Kube.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, LimitBytes: &limit}).DoRaw(ctx)
	if err != nil {
		return "", Explain(err, Request{Verb: "get", Resource: "pods/log", Namespace: namespace, Name: pod, Host: c.Host()})
	}
	return string(b), nil
}
