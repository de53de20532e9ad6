package diagnose

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleWorkerCrashLoop: a worker's container, the Ray container or a sidecar such as the
// autoscaler's or a user's, keeps dying or cannot start. The kubelet restarts it (restartPolicy
// Always) and no KubeRay version deletes a crash-looping worker (shouldDeletePod acts on terminal
// pods only), so it never works without a change. Init containers are worker-init-failing's.
const RuleWorkerCrashLoop = "worker-crashloop"

// workerCrashLoop reports, per worker group and container, the workers whose container keeps
// failing, named after the one with the most restarts, under the container's own name.
func workerCrashLoop(ix *index, c *clusterView) []Finding {
	type key struct{ group, container string }
	type looping struct {
		pod *corev1.Pod
		cr  crash
	}
	byKey := map[key][]looping{}
	for _, w := range c.workers {
		if !ray.Live(w) {
			continue
		}
		if cr, ok := crashLooping(ix, w.Status.ContainerStatuses); ok {
			k := key{w.Labels[ray.LabelGroup], cr.cs.Name}
			byKey[k] = append(byKey[k], looping{w, cr})
		}
	}
	keys := make([]key, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].group+"/"+keys[i].container < keys[j].group+"/"+keys[j].container })
	var out []Finding
	for _, k := range keys {
		ls := byKey[k]
		worst := ls[0]
		names := make([]string, 0, len(ls))
		for _, l := range ls {
			names = append(names, l.pod.Name)
			if l.cr.cs.RestartCount > worst.cr.cs.RestartCount {
				worst = l
			}
		}
		p, cs := worst.pod, worst.cr.cs
		ev := map[string]string{
			"group": k.group, "container": cs.Name, "pod": p.Name, "workers": strings.Join(names, ","), "failing": fmt.Sprint(len(ls)),
			"restarts": fmt.Sprint(cs.RestartCount),
		}
		why := ""
		if w := worst.cr.waiting; w != nil {
			ev["reason"] = w.Reason
			why = w.Reason
		}
		if oom := worst.cr.oom; oom != nil {
			ev["lastState"] = "OOMKilled"
			if why == "" {
				why = "OOMKilled " + age(ix.s.Now.Sub(oom.FinishedAt.Time)) + " ago"
			} else {
				why += ", last exit OOMKilled"
			}
		}
		msg := fmt.Sprintf("%d worker pod(s) of group %s keep failing in container %s: worker %s is %s (%d restarts)",
			len(ls), orNone(k.group), cs.Name, p.Name, why, cs.RestartCount)
		logs := "kubectl logs " + p.Name + " -n " + p.Namespace + " -c " + cs.Name + " --previous"
		remedy := "read its logs (" + logs + ") and fix the workerGroupSpecs entry " + orNone(k.group) + " (command, probes, memory, image)"
		switch {
		case worst.cr.oom != nil:
			remedy = "container " + cs.Name + " ran out of memory: raise its memory limit in the workerGroupSpecs entry " + orNone(k.group) +
				" (for the Ray container, keep object-store-memory below it); " + logs
		case ev["reason"] == "CreateContainerConfigError" || ev["reason"] == "CreateContainerError":
			remedy = "a ConfigMap, Secret or volume container " + cs.Name + " needs is missing: kubectl describe pod " + p.Name + " -n " + p.Namespace
		}
		out = append(out, c.finding(RuleWorkerCrashLoop, state.PodRef(p), msg, remedy, ev))
	}
	return out
}
