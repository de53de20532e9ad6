package ray

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
)

// KubeRay v1.7.0's RayCronJob (feature gate RayCronJob, alpha) makes a RayJob on each tick of its
// schedule, a copy of its spec.jobTemplate (raycronjob_controller.go, constructRayJob): named
// <cronjob>-<minutes since the epoch>, labelled with the RayCronJob's name, annotated with the
// tick, and owned by the RayCronJob (its controller reference, so deleting the RayCronJob
// deletes its RayJobs).
const (
	LabelCronJobName      = "ray.io/cronjob-name"
	AnnotationCronJobTick = "ray.io/cronjob-scheduled-timestamp"
	KindRayCronJob        = "RayCronJob"
)

// CronRun is a RayJob's RayCronJob: its name and the tick the RayJob was made for (RFC 3339, ""
// when not annotated).
type CronRun struct {
	CronJob, Tick string
}

// CronRunOf is the RayCronJob that made j: its controller owner of kind RayCronJob, else the
// label the controller puts beside it. ok is false for a RayJob a user (or anything else) made.
func CronRunOf(j *rayv1.RayJob) (run CronRun, ok bool) {
	for _, o := range j.OwnerReferences {
		if o.Kind == KindRayCronJob && o.Controller != nil && *o.Controller {
			return CronRun{CronJob: o.Name, Tick: j.Annotations[AnnotationCronJobTick]}, true
		}
	}
	if n := j.Labels[LabelCronJobName]; n != "" {
		return CronRun{CronJob: n, Tick: j.Annotations[AnnotationCronJobTick]}, true
	}
	return CronRun{}, false
}
