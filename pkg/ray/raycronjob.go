package ray

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RayCronJob is what this plugin reads of a KubeRay v1.7.0 RayCronJob: the API types it builds on
// (v1.6.2) have no such kind. A bundle keeps the whole object as served; the rules need only
// when it should have made its last RayJob.
type RayCronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              RayCronJobSpec   `json:"spec,omitempty"`
	Status            RayCronJobStatus `json:"status,omitempty"`
}

// RayCronJobSpec is the schedule of a RayCronJob (its jobTemplate is not read).
type RayCronJobSpec struct {
	Schedule string  `json:"schedule"`
	TimeZone *string `json:"timeZone,omitempty"`
	Suspend  *bool   `json:"suspend,omitempty"`
}

// RayCronJobStatus is the one field the operator writes.
type RayCronJobStatus struct {
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
}

// Suspended says whether spec.suspend is true: the operator then makes no RayJob.
func (c *RayCronJob) Suspended() bool { return c.Spec.Suspend != nil && *c.Spec.Suspend }

// CronSchedule is a RayCronJob's schedule as KubeRay v1.7.0's controller reads it
// (raycronjob_controller.go): the standard five fields, in spec.timeZone when set (formatSchedule
// writes "TZ=<zone> <schedule>"), else in the operator's local zone, which this plugin takes as
// UTC (the operator's image sets no TZ) unless the operator's Deployment sets TZ.
type CronSchedule struct {
	schedule cron.Schedule
	// Zone is the zone the ticks are computed in, and where it comes from ("UTC, the operator's").
	Zone string
}

// ScheduleOf parses c's schedule as the operator does, in operatorTZ when spec.timeZone is unset
// (the operator's TZ, "" for UTC). An error is what keeps the operator from ever scheduling it,
// in the words of its own validation where they apply (ValidateRayCronJobSpec).
func ScheduleOf(c *RayCronJob, operatorTZ string) (CronSchedule, error) {
	s := c.Spec.Schedule
	if strings.Contains(s, "TZ") {
		return CronSchedule{}, fmt.Errorf("cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
	}
	if _, err := cron.ParseStandard(s); err != nil {
		return CronSchedule{}, fmt.Errorf("invalid cron schedule: %w", err)
	}
	zone := "UTC, the operator's local zone (its Deployment sets no TZ)"
	tz := "UTC"
	switch {
	case c.Spec.TimeZone != nil && *c.Spec.TimeZone == "":
		return CronSchedule{}, fmt.Errorf("timeZone must not be empty string, omit the field to use the local time zone of the KubeRay operator")
	case c.Spec.TimeZone != nil:
		tz, zone = *c.Spec.TimeZone, *c.Spec.TimeZone+", its spec.timeZone"
	case operatorTZ != "":
		tz, zone = operatorTZ, operatorTZ+", the operator's TZ"
	}
	if _, err := time.LoadLocation(tz); err != nil {
		if c.Spec.TimeZone != nil {
			return CronSchedule{}, fmt.Errorf("invalid time zone: %w", err)
		}
		return CronSchedule{}, fmt.Errorf("the operator's TZ %q is not a zone this machine knows: %w", tz, err)
	}
	sched, err := cron.ParseStandard("CRON_TZ=" + tz + " " + s)
	if err != nil {
		return CronSchedule{}, fmt.Errorf("invalid cron schedule: %w", err)
	}
	return CronSchedule{schedule: sched, Zone: zone}, nil
}

// NextTick is the tick the operator makes its next RayJob for: the first after the last it made
// one for (status.lastScheduleTime), or after the RayCronJob's creation when it has made none.
func (s CronSchedule) NextTick(c *RayCronJob) time.Time {
	from := c.CreationTimestamp.Time
	if c.Status.LastScheduleTime != nil {
		from = c.Status.LastScheduleTime.Time
	}
	return s.schedule.Next(from)
}

// TicksBetween counts the ticks from first (a tick) to now, first included, up to most: the
// operator, once able to, makes one RayJob for each, one reconcile after another, since v1.7.0
// has no startingDeadlineSeconds (it schedules Next(lastScheduleTime), however old).
func (s CronSchedule) TicksBetween(first, now time.Time, most int) int {
	n := 0
	for t := first; !t.After(now) && n < most; t = s.schedule.Next(t) {
		n++
	}
	return n
}
