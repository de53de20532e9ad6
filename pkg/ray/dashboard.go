package ray

import corev1 "k8s.io/api/core/v1"

// DefaultDashboardPort is Ray's dashboard port (ray start --dashboard-port), where KubeRay's
// head Service and probes look for it unless the head's container names another.
const DefaultDashboardPort = 8265

// DashboardPortName is the name KubeRay gives the head container's dashboard port.
const DashboardPortName = "dashboard"

// DashboardPort is the port head's dashboard listens on: its containers' port named "dashboard"
// (KubeRay's name), else Ray's default.
func DashboardPort(head *corev1.Pod) int {
	for _, c := range head.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == DashboardPortName {
				return int(p.ContainerPort)
			}
		}
	}
	return DefaultDashboardPort
}
