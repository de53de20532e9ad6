package diagnose

import (
	"slices"
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// doctor raycronjob/NAME: the RayCronJob's own finding, and the RayJobs it made with their
// clusters; nothing else. A bare NAME never names a RayCronJob.
func TestTargetRayCronJob(t *testing.T) {
	// A RayCronJob the operator refuses, and (rayjob-cronjob-run) a failed RayJob a RayCronJob of
	// the same name made, holding RayCluster raycluster-a.
	f := loadFixture(t, "raycronjob-not-scheduling")
	run := loadFixture(t, "rayjob-cronjob-run")
	f.snap.Jobs = run.snap.Jobs
	target := Target{Kind: ray.KindRayCronJob, Name: "nightly"}
	if !Has(&f.snap, target) || Has(&f.snap, Target{Name: "nightly"}) || Has(&f.snap, Target{Kind: ray.KindRayCronJob, Name: "other"}) {
		t.Fatalf("Has: raycronjob/nightly must be found, a bare nightly and raycronjob/other not")
	}
	r := DiagnoseTarget(&f.snap, Options{}, &target)
	var rules []string
	for _, fd := range r.Findings {
		rules = append(rules, fd.Rule)
	}
	for _, want := range []string{RuleRayCronJobNotScheduling, RuleRayJobFailed} {
		if !slices.Contains(rules, want) {
			t.Errorf("raycronjob/nightly: want %s among %v", want, rules)
		}
	}
	if len(r.RayJobs) != 1 || r.RayJobs[0].Name != "nightly-29149260" || len(r.Clusters) != 1 || r.Clusters[0].Name != "raycluster-a" || len(r.RayServices) != 0 {
		t.Errorf("raycronjob/nightly checked RayJobs %+v, clusters %d, RayServices %d: want its one RayJob and that RayJob's cluster",
			r.RayJobs, len(r.Clusters), len(r.RayServices))
	}
	other := Target{Kind: ray.KindRayJob, Name: "nightly-29149260"}
	for _, fd := range DiagnoseTarget(&f.snap, Options{}, &other).Findings {
		if fd.Rule == RuleRayCronJobNotScheduling {
			t.Errorf("rayjob/nightly-29149260 reported the RayCronJob: %s", fd.Message)
		}
	}
}

// A RayCronJob target whose LIST was refused is unknown, not missing; other targets never are.
func TestUnlisted(t *testing.T) {
	s := &state.Snapshot{Blind: []state.Gap{{Resource: "raycronjobs", Reason: "forbidden: you cannot list raycronjobs.ray.io"}}}
	if got := Unlisted(s, Target{Kind: ray.KindRayCronJob, Name: "x"}); got != "forbidden: you cannot list raycronjobs.ray.io" {
		t.Errorf("raycronjob/x: %q", got)
	}
	if got := Unlisted(s, Target{Kind: ray.KindRayJob, Name: "x"}); got != "" {
		t.Errorf("rayjob/x: %q", got)
	}
	if got := Unlisted(&state.Snapshot{}, Target{Kind: ray.KindRayCronJob, Name: "x"}); got != "" {
		t.Errorf("read: %q", got)
	}
}
