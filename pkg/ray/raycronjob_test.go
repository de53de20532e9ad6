package ray

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func cronJob(schedule string, tz *string, created, last string) *RayCronJob {
	c := &RayCronJob{Spec: RayCronJobSpec{Schedule: schedule, TimeZone: tz}}
	t, _ := time.Parse(time.RFC3339, created)
	c.CreationTimestamp = metav1.NewTime(t)
	if last != "" {
		l, _ := time.Parse(time.RFC3339, last)
		c.Status.LastScheduleTime = &metav1.Time{Time: l}
	}
	return c
}

func TestScheduleOfAsTheOperatorValidates(t *testing.T) {
	empty, bogus := "", "Mars/Olympus"
	for _, tc := range []struct {
		c       *RayCronJob
		refusal string
	}{
		{cronJob("TZ=UTC 0 * * * *", nil, "2025-06-01T10:00:00Z", ""), "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"},
		{cronJob("0 * * *", nil, "2025-06-01T10:00:00Z", ""), "invalid cron schedule: expected exactly 5 fields"},
		{cronJob("0 * * * *", &empty, "2025-06-01T10:00:00Z", ""), "timeZone must not be empty string"},
		{cronJob("0 * * * *", &bogus, "2025-06-01T10:00:00Z", ""), "invalid time zone"},
	} {
		if _, err := ScheduleOf(tc.c, ""); err == nil || !strings.Contains(err.Error(), tc.refusal) {
			t.Errorf("%q: %v, want %q", tc.c.Spec.Schedule, err, tc.refusal)
		}
	}
}

func TestNextTickAndMissedTicks(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	berlin := "Europe/Berlin"
	for _, tc := range []struct {
		name     string
		c        *RayCronJob
		tz       string
		next     string
		missed   int
		zoneHint string
	}{
		{"after the last tick", cronJob("*/5 * * * *", nil, "2025-06-01T10:00:00Z", "2025-06-01T11:00:00Z"), "", "2025-06-01T11:05:00Z", 12, "UTC"},
		{"after creation", cronJob("30 * * * *", nil, "2025-06-01T11:00:00Z", ""), "", "2025-06-01T11:30:00Z", 1, "UTC"},
		{"its own zone", cronJob("30 11 * * *", &berlin, "2025-06-01T08:00:00Z", ""), "", "2025-06-01T09:30:00Z", 1, "Europe/Berlin, its spec.timeZone"},
		{"the operator's TZ", cronJob("30 11 * * *", nil, "2025-06-01T08:00:00Z", ""), berlin, "2025-06-01T09:30:00Z", 1, "the operator's TZ"},
	} {
		s, err := ScheduleOf(tc.c, tc.tz)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		next := s.NextTick(tc.c)
		if got := next.UTC().Format(time.RFC3339); got != tc.next {
			t.Errorf("%s: next tick %s, want %s", tc.name, got, tc.next)
		}
		if got := s.TicksBetween(next, now, 100); got != tc.missed {
			t.Errorf("%s: %d ticks missed, want %d", tc.name, got, tc.missed)
		}
		if !strings.Contains(s.Zone, tc.zoneHint) {
			t.Errorf("%s: zone %q, want it to say %q", tc.name, s.Zone, tc.zoneHint)
		}
	}
}

func TestOperatorFeatureGatesAsChartAndKustomizeWriteThem(t *testing.T) {
	op := func(args ...string) Operator {
		d := appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": "kuberay-operator"}}}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Image: "quay.io/kuberay/operator:v1.7.0", Args: args}}
		return FindOperators([]appsv1.Deployment{d})[0]
	}
	for _, tc := range []struct {
		args    []string
		on, set bool
	}{
		{[]string{"--feature-gates=RayClusterStatusConditions=true,RayCronJob=true"}, true, true},
		{[]string{"--feature-gates", "RayCronJob=true"}, true, true},
		{[]string{"--feature-gates=RayCronJob=false"}, false, true},
		{[]string{"--feature-gates=RayClusterNetworkPolicy=true"}, false, false},
		{nil, false, false},
	} {
		if on, set := op(tc.args...).FeatureGate("RayCronJob"); on != tc.on || set != tc.set {
			t.Errorf("%q: RayCronJob on=%v set=%v, want on=%v set=%v", tc.args, on, set, tc.on, tc.set)
		}
	}
}
