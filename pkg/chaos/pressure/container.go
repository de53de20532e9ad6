package pressure

import (
	corev1 "k8s.io/api/core/v1"
)

// Container is the exact ephemeral container for s. It has no resources, ports or probes (the API
// forbids them on ephemeral containers) and no restart: its script ends by itself.
func Container(s Spec) corev1.EphemeralContainer {
	c := corev1.EphemeralContainer{
		TargetContainerName: s.TargetContainer,
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name:                     s.Name,
			Image:                    s.Image,
			Command:                  []string{"/bin/sh", "-c", Script(s)},
			ImagePullPolicy:          corev1.PullIfNotPresent,
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		},
	}
	if s.Kind == Disk && s.Fill == FillContainer {
		// /proc/1/root of a process owned by another user (Ray images run as uid 1000, busybox as
		// root) is only reachable with CAP_SYS_PTRACE; kubectl debug's "general" profile adds the
		// same capability for the same reason.
		c.SecurityContext = &corev1.SecurityContext{
			Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_PTRACE"}},
		}
	}
	return c
}
