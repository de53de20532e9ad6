package diagnose

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/flagname"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleWorkersStale: without GCS fault tolerance a new head starts a new Ray cluster; workers whose
// Ray container started before it, and have not restarted since, belong to the old one
// (kuberay #1141). Ray's raylet normally exits once the GCS is gone and the kubelet restarts it
// against the new head; one that did not is capacity the new cluster never sees.
const RuleWorkersStale = "workers-stale"

// workersStale reports live, Running workers that started before the current head's Ray
// container, StaleWorkersGrace after that head became Ready. A worker counts only when it is
// older than the head pod (the head was replaced) or the head restarted in place: on a fresh
// cluster, where no Ray worker waits for the GCS under kwok or a slow init container, a worker
// can start a moment before its own head, which is no restart.
func workersStale(ix *index, c *clusterView) []Finding {
	head, rc, stale := staleWorkers(ix, c)
	if len(stale) == 0 {
		return nil
	}
	headStart := startedAt(head)
	var names []string
	var refs []state.Ref
	var oldest time.Time
	for _, w := range stale {
		names = append(names, w.Name)
		refs = append(refs, state.PodRef(w))
		if ws := startedAt(w); oldest.IsZero() || ws.Before(oldest) {
			oldest = ws
		}
	}
	now := ix.s.Now
	ev := map[string]string{
		"workers": strings.Join(names, ","), "stale": fmt.Sprint(len(names)), "head": head.Name,
		"headStarted": age(now.Sub(headStart)) + " ago", "headReady": age(now.Sub(rc.LastTransitionTime.Time)) + " ago",
		"oldestWorkerStarted": age(now.Sub(oldest)) + " ago", "gcsFaultTolerance": "off",
	}
	msg := fmt.Sprintf("%d worker(s) started before head %s (started %s ago, Ready %s ago) and have not restarted since: "+
		"without GCS fault tolerance they belong to the previous Ray cluster, not the new one (kuberay #1141)",
		len(names), head.Name, age(now.Sub(headStart)), age(now.Sub(rc.LastTransitionTime.Time)))
	remedy := "`" + healCmd(c) + " " + flagname.Flag(flagname.StaleWorkers) + "` deletes them (KubeRay creates new workers that join the new head); " +
		"enable GCS fault tolerance (gcsFaultToleranceOptions with an external Redis) so workers survive a head restart"
	f := c.finding(RuleWorkersStale, state.ClusterRef(c.rc), msg, remedy, ev)
	f.Facts.Pods, f.Facts.Head = refs, head.Name
	return []Finding{f}
}

// staleWorkers are the workers workers-stale reports, with the head they are stale against and its
// Ready condition: none with GCS fault tolerance, unless exactly one live head is Running and
// Ready, or within StaleWorkersGrace of it becoming Ready. workers-not-ready leaves these to
// workers-stale, whose remedy (heal --stale-workers) is the one for them.
func staleWorkers(ix *index, c *clusterView) (*corev1.Pod, *corev1.PodCondition, []*corev1.Pod) {
	if gcsFTEnabled(c) {
		return nil, nil, nil // with GCS FT the workers rejoin the restarted head
	}
	live := c.liveHeads()
	if len(live) != 1 || !ray.RunningReady(live[0]) {
		return nil, nil, nil // the head rules say what is wrong with the head
	}
	head := live[0]
	rc := podCondition(head, corev1.PodReady)
	if rc == nil || ix.s.Now.Sub(rc.LastTransitionTime.Time) <= ix.opts.StaleWorkersGrace {
		return nil, nil, nil
	}
	headStart := startedAt(head)
	inPlace := restarts(head) > 0
	var stale []*corev1.Pod
	for _, w := range c.workers {
		if w.DeletionTimestamp != nil || w.Status.Phase != corev1.PodRunning {
			continue
		}
		if ws := startedAt(w); !ws.Before(headStart) || !(inPlace || w.CreationTimestamp.Before(&head.CreationTimestamp)) {
			continue
		}
		stale = append(stale, w)
	}
	return head, rc, stale
}
