package drain

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/raytest"
)

// Each piece of advice rests on one fact of the run, and says nothing when the fact is absent.
func TestAdviceFromWhatWasSeen(t *testing.T) {
	killAt := 0.0
	worker := raytest.ReadyPod("demo-worker-a", "worker", "small", "n2")
	head := raytest.ReadyPod("demo-head", "head", "headgroup", "n2")
	type run struct {
		r         *Report
		t         *target
		heads     []string
		endpoints []string
		recovered bool
		until     bool
	}
	// base: a drain of node n2 (one Ray worker, no budget), every request answered, uncordoned.
	base := func(edit func(*run)) run {
		x := run{r: &Report{Probe: availability.ProbeInfo{KillAtMs: &killAt}, Availability: availability.Availability{Totals: availability.Totals{Requests: 100}},
			Settings: ReportSettings{Rate: 20}, Drain: Section{Uncordoned: true}},
			t: &target{node: "n2", pods: []corev1.Pod{*worker}, rayPods: 1}, recovered: true}
		if edit != nil {
			edit(&x)
		}
		return x
	}
	for _, c := range []struct {
		name string
		run  run
		want []string // the rules, in order
		text string   // a part of the last piece's words
	}{
		{"healthy drain", base(nil), []string{AdviceNoErrors}, "invisible to this client at 20/s"},
		{"warm-up failed", base(func(x *run) {
			x.r.Probe.WarmupFailed, x.r.Totals.Errors, x.r.Totals.Requests = true, 3, 40
		}), []string{AdviceDrainWarmup}, "3 of 40 warm-up requests failed"},
		{"no cordon: nothing to say", base(func(x *run) { x.r.Probe.KillAtMs = nil }), nil, ""},
		{"interrupted", base(func(x *run) {
			x.r.Probe.Interrupted, x.r.Probe.Scheduled, x.r.Probe.Planned = true, 30, 200
		}), []string{AdviceDrainPartial, AdviceNoErrors}, "invisible"},
		{"errors, no budget over the Ray pods", base(func(x *run) { x.r.Totals.Errors = 5 }), []string{AdviceNoBudget}, "kuberay #5004"},
		{"errors, a budget over the worker", base(func(x *run) {
			x.r.Totals.Errors = 5
			x.t.budgets = []budget{{Namespace: "ml", Name: "workers", Pods: []string{"demo-worker-a"}}}
		}), nil, ""},
		{"refused", base(func(x *run) {
			x.r.Drain.Pods = []availability.TakenPod{{Pod: "ml/demo-worker-a", Refusals: 3, Outcome: "refused"}}
		}), []string{AdviceNoErrors, AdviceRefused}, "refused 3 evictions"},
		{"the head on the node", base(func(x *run) {
			x.t.pods = append(x.t.pods, *head)
			x.heads = []string{"ml/demo-head"}
		}), []string{AdviceNoErrors, AdviceHeadOnNode}, "doctor's rule gcs-ft-off"},
		{"every endpoint on the node", base(func(x *run) {
			x.r.Totals.Errors = 2
			x.t.budgets = []budget{{Namespace: "ml", Name: "workers", Pods: []string{"demo-worker-a"}}}
			x.endpoints = []string{"demo-worker-a"}
		}), []string{AdviceAllEndpoints}, "Every ready endpoint of the probed Service (demo-worker-a) was on node n2"},
		{"an endpoint elsewhere", base(func(x *run) { x.endpoints = []string{"demo-worker-a", "demo-worker-b"} }), []string{AdviceNoErrors}, ""},
		{"not recovered", base(func(x *run) { x.until, x.recovered = true, false }), []string{AdviceNoErrors, AdviceNotRecovered}, "before --timeout"},
		{"left cordoned", base(func(x *run) { x.r.Drain.Uncordoned = false }), []string{AdviceNoErrors, AdviceStillCordoned}, "kubectl uncordon n2"},
		{"cordoned before the run", base(func(x *run) { x.r.Drain.AlreadyCordoned = true }), []string{AdviceNoErrors, AdviceStillCordoned}, "still cordoned"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := advice(c.run.r, c.run.t, c.run.heads, "gcs-ft-off", c.run.endpoints, c.run.recovered, c.run.until)
			var rules []string
			for _, a := range got {
				rules = append(rules, a.Rule)
				if a.Source != "observed" {
					t.Errorf("%s: source %q", a.Rule, a.Source)
				}
			}
			if strings.Join(rules, ",") != strings.Join(c.want, ",") {
				t.Fatalf("rules %v, want %v: %+v", rules, c.want, got)
			}
			if c.text != "" && !strings.Contains(got[len(got)-1].Text, c.text) {
				t.Errorf("%s says %q, want %q in it", got[len(got)-1].Rule, got[len(got)-1].Text, c.text)
			}
		})
	}
}
