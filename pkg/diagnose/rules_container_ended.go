package diagnose

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleContainerNeverRestarted is an invariant: every container of a live Ray pod is running or
// will be restarted. A container that failed in a pod whose restartPolicy is Never is neither:
// the kubelet will not run it again, the pod stays Running (its Ray container still runs) and is
// never Ready again, and no KubeRay version acts on it, since shouldDeletePod reads the pod's phase
// and the Ray container's state only (v1.1.1 to v1.7.0). The case met most: a SidecarMode RayJob,
// whose submitter is a container of the head (restartPolicy Never): once it fails the head can
// never be Ready, and the RayJob stays Initializing for good while doctor would otherwise blame
// what waits on the head.
const RuleContainerNeverRestarted = "container-never-restarted"

// containerNeverRestarted reports each live, Running Ray pod with a container other than the Ray
// container (whose exit the head and worker rules judge, and KubeRay deletes the pod for) that
// terminated with a non-zero exit code under restartPolicy Never. Sidecars (init containers with
// restartPolicy Always) are restarted whatever the pod's policy; an exit 0 is a container that
// finished its work.
func containerNeverRestarted(_ *index, c *clusterView) []Finding {
	var out []Finding
	for _, p := range append(append([]*corev1.Pod(nil), c.heads...), c.workers...) {
		if !ray.Live(p) || p.Status.Phase != corev1.PodRunning || p.Spec.RestartPolicy != corev1.RestartPolicyNever {
			continue
		}
		rayName := ""
		if len(p.Spec.Containers) > 0 {
			rayName = p.Spec.Containers[0].Name
		}
		for i := range p.Status.ContainerStatuses {
			cs := &p.Status.ContainerStatuses[i]
			t := cs.State.Terminated
			if cs.Name == rayName || t == nil || t.ExitCode == 0 {
				continue
			}
			role := "worker"
			if ray.IsHead(p) {
				role = "head"
			}
			ev := map[string]string{"pod": p.Name, "container": cs.Name, "exitCode": fmt.Sprint(t.ExitCode), "reason": t.Reason,
				"finishedAt": t.FinishedAt.UTC().Format("2006-01-02T15:04:05Z"), "restartPolicy": string(p.Spec.RestartPolicy)}
			msg := fmt.Sprintf("container %s of %s pod %s exited with code %d (%s) and its pod's restartPolicy is Never: it will never run "+
				"again, so the pod stays Running and can never be Ready, and KubeRay, which judges the Ray container only, leaves it",
				cs.Name, role, p.Name, t.ExitCode, t.Reason)
			if ray.IsHead(p) {
				msg += "; what waits on this head (a RayJob's submission, its workers) waits for good"
			}
			remedy := fmt.Sprintf("read why it failed (kubectl logs -n %s %s -c %s), then delete the pod so that KubeRay creates it anew "+
				"(kubectl delete pod -n %s %s), or the RayJob or RayCluster that owns it", p.Namespace, p.Name, cs.Name, p.Namespace, p.Name)
			f := c.finding(RuleContainerNeverRestarted, state.PodRef(p), msg, remedy, ev)
			f.Facts.Pods = []state.Ref{state.PodRef(p)}
			out = append(out, f)
		}
	}
	return out
}
