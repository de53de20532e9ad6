package workerkill

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
)

// Each piece of advice rests on one fact of the run: whose proxies the errors came through,
// deployments left with no replica, workers not replaced.
func TestAdviceFromWhatWasSeen(t *testing.T) {
	killAt, ready := 0.0, 900.0
	pod := func(name string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name}}
	}
	// base: w1 and w2 of group small killed out of 3, both replaced and Ready, nothing failed.
	base := func(edit func(*Report, *target)) (*Report, *target) {
		r := &Report{Probe: availability.ProbeInfo{KillAtMs: &killAt}, Availability: availability.Availability{Totals: availability.Totals{Requests: 100}}, Settings: ReportSettings{Rate: 40},
			Kill: Section{Losses: availability.Losses{Replacements: []availability.Replacement{{Pod: "ml/w4", ReadyMs: &ready}, {Pod: "ml/w5", ReadyMs: &ready}}}}}
		t := &target{group: "small", live: 3, chosen: []corev1.Pod{pod("w1"), pod("w2")}}
		if edit != nil {
			edit(r, t)
		}
		return r, t
	}
	for _, c := range []struct {
		name       string
		edit       func(*Report, *target)
		want, text string // the rules; a part of the last one's words
	}{
		{"invisible", nil, AdviceNoErrors, "losing 2 workers of group small was invisible to this client at 40/s"},
		{"warm-up failed", func(r *Report, _ *target) { r.Probe.WarmupFailed, r.Totals.Errors = true, 1 }, AdviceWarmupFailed, "Nothing was killed: 1 of 100"},
		{"errors through the killed workers and the others", func(r *Report, _ *target) {
			r.Totals.Errors = 7
			r.Endpoints = []availability.Endpoint{{Name: "w1", Errors: 5}, {Name: "w3", Errors: 2}, {Name: "head", Errors: 0}}
		}, AdviceErrorsKilled + "," + AdviceErrorsOthers, "2 of 7 errors came through pods that were not killed"},
		{"every replica of a deployment killed", func(_ *Report, t *target) {
			t.replicas = &placement{byPod: map[string][]string{"w1": {"app/fruit#a"}, "w2": {"app/fruit#b", "app/veg#c"}, "w3": {"app/veg#d"}},
				total: map[string]int{"app/fruit": 2, "app/veg": 2}}
		}, AdviceNoErrors + "," + AdviceAllReplicas, "Every replica of app/fruit was on the killed workers"},
		{"one not replaced", func(r *Report, _ *target) { r.Kill.Replacements[1].ReadyMs = nil }, AdviceNoErrors + "," + AdviceNotReplaced, "1 of 2 killed workers"},
		{"interrupted: replacement not judged", func(r *Report, _ *target) {
			r.Probe.Interrupted, r.Kill.Replacements = true, nil
		}, AdvicePartial + "," + AdviceNoErrors, "invisible"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := advice(base(c.edit))
			var rules []string
			for _, a := range got {
				rules = append(rules, a.Rule)
			}
			if strings.Join(rules, ",") != c.want {
				t.Fatalf("rules %v, want %s: %+v", rules, c.want, got)
			}
			if last := got[len(got)-1]; !strings.Contains(last.Text, c.text) {
				t.Errorf("%s says %q, want %q in it", last.Rule, last.Text, c.text)
			}
		})
	}
}
