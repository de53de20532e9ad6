package diagnose

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// workersNotReady: the head works but workers have not been Ready for a long time, typically
// because they lost the GCS when the head restarted and never rejoined (failure-modes row 8).
func workersNotReady(ix *index, c *clusterView) []Finding {
	var head *corev1.Pod
	for _, h := range c.heads {
		if ray.RunningReady(h) {
			head = h
			break
		}
	}
	if head == nil {
		return nil // head findings say what is wrong; every worker is expected to wait
	}
	if servesByDesign(c) {
		return nil
	}
	var stuck []string
	var longest time.Duration
	live := 0
	_, _, stale := staleWorkers(ix, c)
	for _, w := range c.workers {
		// Leaving, finished, or not started yet: a Pending worker waits for a node or an image (a
		// capacity matter, often an autoscaler at work), not for the head. A stale worker is
		// workers-stale's, a crash-looping one worker-crashloop's, one whose egress is isolated
		// without DNS network-policy-blocks-dns': one finding, with the remedy that fits it.
		if !ray.Live(w) || w.Status.Phase == corev1.PodPending || slices.Contains(stale, w) {
			continue
		}
		if _, looping := crashLooping(ix, w.Status.ContainerStatuses); looping || dnsBlocked(ix, w) {
			continue
		}
		live++
		if podutils.IsPodReady(w) {
			continue
		}
		since := w.CreationTimestamp.Time
		if rc := podCondition(w, corev1.PodReady); rc != nil && rc.LastTransitionTime.After(since) {
			since = rc.LastTransitionTime.Time
		}
		if d := ix.s.Now.Sub(since); d > ix.opts.WorkersNotReadyWindow {
			stuck = append(stuck, w.Name)
			longest = max(longest, d)
		}
	}
	if len(stuck) == 0 {
		return nil
	}
	headStart := startedAt(head)
	// Restarted in place (a container restart), or replaced (a head pod newer than the workers).
	// Not "started after the workers were created": a fresh head's container always starts a
	// moment after its workers are created, which is no restart.
	restarted := restarts(head) > 0 || head.CreationTimestamp.Time.After(oldestCreation(c.workers))
	ft := gcsFTEnabled(c)
	ev := map[string]string{
		"workers": strings.Join(stuck, ","), "notReady": fmt.Sprintf("%d/%d", len(stuck), live),
		"age": age(longest), "head": head.Name, "headStarted": age(ix.s.Now.Sub(headStart)) + " ago",
		"gcsFaultTolerance": onOff(ft),
	}
	msg := fmt.Sprintf("%d of %d workers not Ready for up to %s while head %s is Ready", len(stuck), live, age(longest), head.Name)
	remedy := "read a worker's log (kubectl logs " + stuck[0] + " -n " + c.rc.Namespace + "); delete the stuck workers so the operator recreates them"
	if restarted {
		msg += fmt.Sprintf(" (head restarted %s ago)", age(ix.s.Now.Sub(headStart)))
	}
	if !ft {
		msg += "; GCS fault tolerance is off, so workers do not survive a head restart"
		remedy += "; enable GCS fault tolerance (spec.gcsFaultToleranceOptions with an external Redis) so they rejoin a restarted head"
	}
	return []Finding{c.finding(RuleWorkersNotReady, state.ClusterRef(c.rc), msg, remedy, ev)}
}

// servesByDesign: c is the active cluster of a RayService that says it serves. KubeRay gives a
// RayService's workers a readiness probe on the Serve proxy (-/healthz, every release), and Ray
// Serve's proxy on a node with no Serve replica answers it with a failure so that no traffic goes
// there: such workers are not Ready by design (kuberay #3467, #3133; KubeRay's docs,
// "rayservice-no-ray-serve-replica"), and are not reported.
func servesByDesign(c *clusterView) bool {
	rs := c.service
	return rs != nil && rs.Status.ActiveServiceStatus.RayClusterName == c.rc.Name && len(servingClaims(rs)) > 0
}

func oldestCreation(ps []*corev1.Pod) time.Time {
	var t time.Time
	for _, p := range ps {
		if t.IsZero() || p.CreationTimestamp.Time.Before(t) {
			t = p.CreationTimestamp.Time
		}
	}
	return t
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
