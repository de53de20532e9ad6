package drain

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/report"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// rayPod is a Ready Ray pod of cluster demo on node.
func rayPod(name, role, group, node string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, UID: types.UID("uid-" + name),
		Labels: map[string]string{ray.LabelIsRayNode: "yes", ray.LabelCluster: "demo", ray.LabelNodeType: role, ray.LabelGroup: group}},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	return p
}

func all(*corev1.Pod) bool { return true }

// The worker on the drained node goes, KubeRay's new worker is created, scheduled elsewhere and
// Ready: recovered only then, with each step in the timeline.
func TestTrackerFollowsTheDrainToRecovery(t *testing.T) {
	head, worker := rayPod("demo-head", "head", "headgroup", "n1"), rayPod("demo-worker-a", "worker", "small", "n2")
	tr := NewTracker("n2", []corev1.Pod{*worker}, all)
	tr.Pod(head, false, at(0))
	tr.Pod(worker, false, at(0))
	if ok, _ := tr.Recovered(); ok {
		t.Fatal("recovered before the drain began")
	}
	tr.Disrupted("cordoned, then evict", at(1000))
	tr.Requested(worker, "evict", at(1001))
	tr.Accepted(worker, at(1002))
	gone := worker.DeepCopy()
	tr.Pod(gone, true, at(1100))
	if ok, _ := tr.Recovered(); ok {
		t.Fatal("recovered with the group one Ready worker short")
	}
	fresh := rayPod("demo-worker-b", "worker", "small", "")
	fresh.Status = corev1.PodStatus{Phase: corev1.PodPending}
	tr.Pod(fresh, false, at(1200))
	fresh = fresh.DeepCopy()
	fresh.Spec.NodeName = "n3"
	tr.Pod(fresh, false, at(1300))
	if ok, _ := tr.Recovered(); ok {
		t.Fatal("recovered before the new worker was Ready")
	}
	tr.Pod(rayPod("demo-worker-b", "worker", "small", "n3"), false, at(2000))
	ok, since := tr.Recovered()
	if !ok || !since.Equal(at(2000)) {
		t.Fatalf("Recovered() = %v, %v; want true at the new worker's Ready", ok, since)
	}
	var kinds []string
	for _, e := range tr.Timeline().Events() {
		kinds = append(kinds, string(e.Kind))
	}
	want := "NodeCordoned EvictionRequested EvictionAccepted DrainedPodGone RayPodCreated RayPodScheduled RayPodReady"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("timeline %s, want %s", got, want)
	}
	if s := tr.State(); s != "node n2: 1 of 1 pods gone; 1 new Ray pods, 1 Ready" {
		t.Errorf("State() = %q", s)
	}
}

// A refused pod keeps the run from recovering; given up, it is done, and the report says it is
// still refused, with the budget.
func TestRefusedPodIsReportedWithItsBudget(t *testing.T) {
	worker := rayPod("demo-worker-a", "worker", "small", "n2")
	tr := NewTracker("n2", []corev1.Pod{*worker}, all)
	tr.Pod(worker, false, at(0))
	tr.Disrupted("cordoned, then evict", at(1000))
	for i := 0; i < 2; i++ {
		tr.Requested(worker, "evict", at(1000+5000*i))
		tr.RefusedBy(worker, "demo-workers", "The disruption budget demo-workers needs 1 healthy pods and has 1 currently", at(1001+5000*i))
	}
	if ok, _ := tr.Recovered(); ok {
		t.Fatal("recovered while a budget holds the pod")
	}
	tr.GaveUp(worker, "still refused when the run ended (--timeout or its end)", at(9000))
	tgt := &target{node: "n2", pods: []corev1.Pod{*worker}, rayPods: 1}
	in := report.Input{Timeline: tr.Timeline(), Reference: timeline.NodeCordoned}
	r := buildReport(in, ReportSettings{Node: "n2"}, tgt, true, map[string]bool{"ml/demo-worker-a": true})
	p := r.Drain.Pods[0]
	if p.Outcome != "refused" || p.Refusals != 2 || !strings.HasPrefix(p.RefusedBy, "PodDisruptionBudget demo-workers: ") || p.GoneMs != nil {
		t.Errorf("pod row %+v", p)
	}
	if got := stillRefused(r.Drain); !strings.Contains(got, "ml/demo-worker-a refused 2 times (PodDisruptionBudget demo-workers") {
		t.Errorf("stillRefused = %q", got)
	}
}

// A pod the watch does not see (another namespace's) is done once its eviction is accepted.
func TestUnwatchedPodIsDoneWhenAccepted(t *testing.T) {
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "dns", UID: "uid-dns"}}
	tr := NewTracker("n2", []corev1.Pod{*other}, func(p *corev1.Pod) bool { return ray.IsRayPod(p) })
	tr.Disrupted("cordoned, then evict", at(0))
	if ok, _ := tr.Recovered(); ok {
		t.Fatal("recovered before the eviction was accepted")
	}
	tr.Accepted(other, at(10))
	if ok, _ := tr.Recovered(); !ok {
		t.Fatal("an accepted pod no watch sees keeps the run from recovering")
	}
}

// --node-of picks the node of the head first for any, else of the first live pod of the role.
func TestPickFrom(t *testing.T) {
	gone := rayPod("demo-worker-0", "worker", "small", "n0")
	gone.Status.Phase = corev1.PodFailed
	pods := []corev1.Pod{*rayPod("demo-worker-b", "worker", "small", "n3"), *gone, *rayPod("demo-worker-a", "worker", "small", "n2"),
		*rayPod("demo-head", "head", "headgroup", "n1")}
	for role, want := range map[string]string{RoleAny: "n1", RoleHead: "n1", RoleWorker: "n2"} {
		if got := pickFrom(pods, role); got != want {
			t.Errorf("pickFrom(%s) = %q, want %q", role, got, want)
		}
	}
	if got := pickFrom(pods[1:2], RoleWorker); got != "" {
		t.Errorf("a failed pod's node was picked: %q", got)
	}
}

// A budget is kept when its selector takes a pod the drain evicts, as the Eviction API matches.
func TestMatchBudgets(t *testing.T) {
	worker := rayPod("demo-worker-a", "worker", "small", "n2")
	pdb := func(name string, sel map[string]string, allowed int32) policyv1.PodDisruptionBudget {
		return policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name},
			Spec:   policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed}}
	}
	got := matchBudgets([]policyv1.PodDisruptionBudget{
		pdb("workers", map[string]string{ray.LabelGroup: "small"}, 0),
		pdb("heads", map[string]string{ray.LabelNodeType: "head"}, 1),
	}, []corev1.Pod{*worker})
	if len(got) != 1 || got[0].Name != "workers" || got[0].Pods[0] != "demo-worker-a" {
		t.Fatalf("matchBudgets = %+v", got)
	}
	if w := got[0].words(); !strings.Contains(w, "allows no disruption now: it will refuse demo-worker-a") {
		t.Errorf("words = %q", w)
	}
}
