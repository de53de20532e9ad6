package drain

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/follow"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/raytest"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// A pod a budget refused twice, then given up: the report's row says refused, with the budget,
// and the run's error names it.
func TestRefusedPodIsReportedWithItsBudget(t *testing.T) {
	worker := raytest.ReadyPod("demo-worker-a", "worker", "small", "n2")
	tr := follow.NewLosses(timeline.Event{Kind: timeline.NodeCordoned, Object: "n2"}, timeline.EvictionFailed, "node n2",
		[]corev1.Pod{*worker}, func(*corev1.Pod) bool { return true })
	tr.Pod(worker, false, at(0))
	tr.Disrupted("cordoned, then evict", at(1000))
	for i := 0; i < 2; i++ {
		tr.Requested(worker, "evict", at(1000+5000*i))
		tr.RefusedBy(worker, "demo-workers", "The disruption budget demo-workers needs 1 healthy pods and has 1 currently", at(1001+5000*i))
	}
	tr.GaveUp(worker, "still refused when the run ended (--timeout or its end)", at(9000))
	tgt := &target{node: "n2", pods: []corev1.Pod{*worker}, rayPods: 1}
	in := availability.Input{Timeline: tr.Timeline()}
	r := buildReport(in, ReportSettings{Node: "n2"}, tgt, true, map[string]bool{"ml/demo-worker-a": true})
	p := r.Drain.Pods[0]
	if p.Outcome != "refused" || p.Refusals != 2 || !strings.HasPrefix(p.RefusedBy, "PodDisruptionBudget demo-workers: ") || p.GoneMs != nil {
		t.Errorf("pod row %+v", p)
	}
	if got := r.Drain.StillRefused(); !strings.Contains(got, "ml/demo-worker-a refused 2 times (PodDisruptionBudget demo-workers") {
		t.Errorf("StillRefused = %q", got)
	}
}

// --node-of picks the node of the head first for any, else of the first live pod of the role.
func TestPickFrom(t *testing.T) {
	gone := raytest.ReadyPod("demo-worker-0", "worker", "small", "n0")
	gone.Status.Phase = corev1.PodFailed
	pods := []corev1.Pod{*raytest.ReadyPod("demo-worker-b", "worker", "small", "n3"), *gone, *raytest.ReadyPod("demo-worker-a", "worker", "small", "n2"),
		*raytest.ReadyPod("demo-head", "head", "headgroup", "n1")}
	for role, want := range map[string]string{RoleAny: "n1", RoleHead: "n1", RoleWorker: "n2"} {
		if got := pickFrom(pods, role); got != want {
			t.Errorf("pickFrom(%s) = %q, want %q", role, got, want)
		}
	}
	if got := pickFrom([]corev1.Pod{*gone}, RoleWorker); got != "" {
		t.Errorf("a failed pod's node was picked: %q", got)
	}
}

// A budget is kept when its selector takes a pod the drain evicts, as the Eviction API matches.
func TestMatchBudgets(t *testing.T) {
	worker := raytest.ReadyPod("demo-worker-a", "worker", "small", "n2")
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
