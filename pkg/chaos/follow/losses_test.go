package follow

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/raytest"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

var lossT0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func lossAt(ms int) time.Time { return lossT0.Add(time.Duration(ms) * time.Millisecond) }

func everyPod(*corev1.Pod) bool { return true }

func cordonLosses(pods ...corev1.Pod) *Losses {
	return NewLosses(timeline.Event{Kind: timeline.NodeCordoned, Object: "n2"}, timeline.EvictionFailed, "node n2", pods, everyPod)
}

// The worker on the drained node goes, KubeRay's new worker is created, scheduled elsewhere and
// Ready: recovered only then, with each step in the timeline.
func TestLossesFollowTheStepToRecovery(t *testing.T) {
	head, worker := raytest.ReadyPod("demo-head", "head", "headgroup", "n1"), raytest.ReadyPod("demo-worker-a", "worker", "small", "n2")
	tr := cordonLosses(*worker)
	tr.Pod(head, false, lossAt(0))
	tr.Pod(worker, false, lossAt(0))
	if ok, _ := tr.Recovered(); ok {
		t.Fatal("recovered before the step began")
	}
	tr.Disrupted("cordoned, then evict", lossAt(1000))
	tr.Requested(worker, "evict", lossAt(1001))
	tr.Accepted(worker, lossAt(1002))
	tr.Pod(worker.DeepCopy(), true, lossAt(1100))
	if ok, _ := tr.Recovered(); ok {
		t.Fatal("recovered with the group one Ready worker short")
	}
	fresh := raytest.ReadyPod("demo-worker-b", "worker", "small", "")
	fresh.Status = corev1.PodStatus{Phase: corev1.PodPending}
	tr.Pod(fresh, false, lossAt(1200))
	fresh = fresh.DeepCopy()
	fresh.Spec.NodeName = "n3"
	tr.Pod(fresh, false, lossAt(1300))
	if ok, _ := tr.Recovered(); ok {
		t.Fatal("recovered before the new worker was Ready")
	}
	tr.Pod(raytest.ReadyPod("demo-worker-b", "worker", "small", "n3"), false, lossAt(2000))
	ok, since := tr.Recovered()
	if !ok || !since.Equal(lossAt(2000)) {
		t.Fatalf("Recovered() = %v, %v; want true at the new worker's Ready", ok, since)
	}
	var kinds []string
	for _, e := range tr.Timeline().Events() {
		kinds = append(kinds, string(e.Kind))
	}
	want := "NodeCordoned EvictionRequested EvictionAccepted PodGone RayPodCreated RayPodScheduled RayPodReady"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("timeline %s, want %s", got, want)
	}
	if s := tr.State(); s != "node n2: 1 of 1 pods gone; 1 new Ray pods, 1 Ready" {
		t.Errorf("State() = %q", s)
	}
}

// A refused pod keeps the run from recovering until it is given up.
func TestRefusedPodHoldsRecovery(t *testing.T) {
	worker := raytest.ReadyPod("demo-worker-a", "worker", "small", "n2")
	tr := cordonLosses(*worker)
	tr.Pod(worker, false, lossAt(0))
	tr.Disrupted("cordoned, then evict", lossAt(1000))
	tr.RefusedBy(worker, "demo-workers", "The disruption budget demo-workers needs 1 healthy pods and has 1 currently", lossAt(1001))
	if ok, _ := tr.Recovered(); ok {
		t.Fatal("recovered while a budget holds the pod")
	}
	tr.GaveUp(worker, "still refused when the run ended", lossAt(9000))
	if ok, _ := tr.Recovered(); !ok {
		t.Fatal("a pod given up keeps the run from recovering")
	}
}

// A pod the watch does not see (another namespace's) is done once its eviction is accepted.
func TestUnwatchedPodIsDoneWhenAccepted(t *testing.T) {
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "dns", UID: "uid-dns"}}
	tr := NewLosses(timeline.Event{Kind: timeline.NodeCordoned, Object: "n2"}, timeline.EvictionFailed, "node n2",
		[]corev1.Pod{*other}, func(p *corev1.Pod) bool { return ray.IsRayPod(p) })
	tr.Disrupted("cordoned, then evict", lossAt(0))
	if ok, _ := tr.Recovered(); ok {
		t.Fatal("recovered before the eviction was accepted")
	}
	tr.Accepted(other, lossAt(10))
	if ok, _ := tr.Recovered(); !ok {
		t.Fatal("an accepted pod no watch sees keeps the run from recovering")
	}
}
