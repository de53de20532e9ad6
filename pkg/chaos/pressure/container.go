package pressure

import (
	"strings"

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
			Command:                  []string{"/bin/sh", "-c", EscapeExpansion(Script(s))},
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

// EscapeExpansion doubles every $ of s. The kubelet expands $(VAR) in a container's command and
// args, and turns $$ into $ (its escape for a literal $), before the runtime sees them: unescaped,
// the script's kill -USR1 $$ would run as kill -USR1 $ and its deadline would never arrive. With
// every $ doubled, what the shell runs is s exactly, whatever variables the container has.
func EscapeExpansion(s string) string {
	return strings.ReplaceAll(s, "$", "$$")
}
