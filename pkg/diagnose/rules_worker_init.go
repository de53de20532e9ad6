package diagnose

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleWorkerInitFailing: a worker's init container (KubeRay's wait-gcs-ready, or the user's own)
// keeps failing, so the worker's Ray container never starts (kuberay #2735).
const RuleWorkerInitFailing = "worker-init-failing"

// workerInitFailing reports the workers whose init container is crash-looping, cannot start, or
// was OOMKilled and is being restarted. A wait-gcs-ready that is simply still waiting for the
// head's GCS (running, no restarts) is what every new worker does and is not reported.
func workerInitFailing(ix *index, c *clusterView) []Finding {
	type failing struct {
		pod    *corev1.Pod
		cs     corev1.ContainerStatus
		reason string
	}
	var bad []failing
	for _, w := range c.workers {
		if !ray.Live(w) {
			continue // leaving or finished: the operator replaces terminal workers
		}
		for _, cs := range w.Status.InitContainerStatuses {
			if r := initFailure(cs); r != "" {
				bad = append(bad, failing{w, cs, r})
				break
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	// The worker with the most restarts names the finding: its logs show the failure best.
	worst := bad[0]
	names := make([]string, 0, len(bad))
	for _, b := range bad {
		names = append(names, b.pod.Name)
		if b.cs.RestartCount > worst.cs.RestartCount {
			worst = b
		}
	}
	p, cs := worst.pod, worst.cs
	ev := map[string]string{
		"pod": p.Name, "container": cs.Name, "reason": worst.reason, "restarts": fmt.Sprint(cs.RestartCount),
		"workers": strings.Join(names, ","), "failing": fmt.Sprint(len(bad)),
	}
	if t := cs.LastTerminationState.Terminated; t != nil {
		ev["lastState"] = t.Reason
		ev["exitCode"] = fmt.Sprint(t.ExitCode)
	}
	msg := fmt.Sprintf("%d worker(s) never start: init container %s of worker %s is %s (%d restarts)",
		len(bad), cs.Name, p.Name, worst.reason, cs.RestartCount)
	if ev["lastState"] != "" && ev["lastState"] != worst.reason {
		msg += fmt.Sprintf(", last exit %s (%s)", ev["exitCode"], ev["lastState"])
	}
	remedy := "read its logs: kubectl logs " + p.Name + " -n " + p.Namespace + " -c " + cs.Name + " --previous"
	oom := worst.reason == "OOMKilled" || ev["lastState"] == "OOMKilled"
	switch {
	case oom && cs.Name == "wait-gcs-ready":
		remedy = "the init container ran out of memory at its limit; KubeRay v1.1.1 to v1.6.0 inject wait-gcs-ready with a fixed " +
			"256Mi limit that the RayCluster cannot change (kuberay #2735): set ENABLE_INIT_CONTAINER_INJECTION=false on the " +
			"operator and give the workers an init container of your own with more memory; " + remedy
	case oom:
		remedy = "the init container ran out of memory: raise its memory limit in workerGroupSpecs[].template; " + remedy
	case cs.Name == "wait-gcs-ready":
		remedy += "; wait-gcs-ready fails when it cannot reach the head's GCS (head Service, network policy, TLS or auth settings)"
	}
	return []Finding{c.finding(RuleWorkerInitFailing, state.PodRef(p), msg, remedy, ev)}
}

// initFailure is why an init container status shows a failure that will not clear by itself, or "".
func initFailure(cs corev1.ContainerStatus) string {
	if t := cs.State.Terminated; t != nil && t.ExitCode == 0 {
		return "" // completed
	}
	if w := cs.State.Waiting; w != nil && stuckWaiting[w.Reason] {
		return w.Reason
	}
	// Restarted after running out of memory: the kubelet shows Running or PodInitializing
	// between back-offs, and the next attempt hits the same limit.
	if t := cs.LastTerminationState.Terminated; t != nil && t.Reason == "OOMKilled" && cs.RestartCount > 0 {
		return "OOMKilled"
	}
	if t := cs.State.Terminated; t != nil && t.Reason == "OOMKilled" {
		return "OOMKilled"
	}
	return ""
}
