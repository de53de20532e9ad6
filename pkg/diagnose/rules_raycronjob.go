package diagnose

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleRayCronJobNotScheduling is an invariant between a RayCronJob's schedule and the operator's
// record of it. KubeRay v1.7.0 makes a RayJob at each tick and writes the tick into
// status.lastScheduleTime, the only status it writes (raycronjob_controller.go). A RayCronJob not
// suspended whose next tick after that (or after its creation) passed more than cronLate ago has
// made no RayJob for it, and nothing else says so: the operator refuses a spec it cannot use with
// one Warning Event (InvalidRayCronJobSpec) and never reconciles it again until it changes, and
// it runs no RayCronJob controller at all without --feature-gates=RayCronJob=true.
const RuleRayCronJobNotScheduling = "raycronjob-not-scheduling"

// cronLate is how long past its tick a RayCronJob may be without a RayJob: the operator requeues
// itself for the tick, so a healthy one is late by a reconcile.
const cronLate = 2 * time.Minute

// cronTicksCounted bounds the missed ticks counted (a minutely schedule broken for a week).
const cronTicksCounted = 10000

// evInvalidRayCronJobSpec is the operator's refusal of a RayCronJob's spec.
const evInvalidRayCronJobSpec = "InvalidRayCronJobSpec"

// firstCronRelease is the first KubeRay release with a RayCronJob controller.
var firstCronRelease = version.MustParseSemantic("v1.7.0")

// cronJobFindings runs the RayCronJob rule on every RayCronJob.
func cronJobFindings(ix *index, t *Target) []Finding {
	var out []Finding
	for i := range ix.s.CronJobs {
		if t != nil && ix.s.CronJobs[i].Name != t.Name {
			continue
		}
		out = append(out, rayCronJobNotScheduling(ix, &ix.s.CronJobs[i])...)
	}
	return out
}

func rayCronJobNotScheduling(ix *index, c *ray.RayCronJob) []Finding {
	if c.Suspended() || c.DeletionTimestamp != nil {
		return nil
	}
	now := ix.s.Now
	ref := state.Ref{Kind: ray.KindRayCronJob, Namespace: c.Namespace, Name: c.Name, UID: string(c.UID)}
	what := "RayCronJob " + c.Namespace + "/" + c.Name
	edit := "kubectl edit raycronjob " + c.Name + " -n " + c.Namespace
	ev := map[string]string{"schedule": c.Spec.Schedule}
	if c.Status.LastScheduleTime != nil {
		ev["lastScheduleTime"] = c.Status.LastScheduleTime.UTC().Format(time.RFC3339)
	}
	// The operator records its refusal once, and reconciles the RayCronJob again only when it
	// changes (it does not requeue a refused one): the Event is the cause at any age, as long
	// as the API server keeps it (an hour by default).
	refused := ix.warningWithin(ray.KindRayCronJob, c.Namespace, c.Name, string(c.UID), 0)
	if refused != nil {
		ev["operatorWarning"] = refused.reason
	}
	finding := func(msg, remedy string) []Finding {
		return []Finding{{Rule: RuleRayCronJobNotScheduling, Severity: severityOf(RuleRayCronJobNotScheduling), Object: ref,
			Message: msg, Remedy: remedy, Evidence: ev}}
	}
	sched, err := ray.ScheduleOf(c, ix.operatorTZ())
	if err != nil {
		// The operator's own validation refuses it: it never makes a RayJob, due or not.
		msg := fmt.Sprintf("%s never makes a RayJob: %v", what, err)
		if refused != nil {
			msg += "; the operator says: " + refused.describe(now)
		}
		return finding(msg, "fix spec.schedule or spec.timeZone ("+edit+"): standard cron, five fields, zone in spec.timeZone; the operator reconciles it again once it changes")
	}
	next := sched.NextTick(c)
	late := now.Sub(next)
	if late <= cronLate {
		return nil
	}
	missed := sched.TicksBetween(next, now, cronTicksCounted)
	ev["zone"], ev["missedTick"], ev["late"], ev["missedTicks"] = sched.Zone, next.UTC().Format(time.RFC3339), age(late), strconv.Itoa(missed)
	made := "it has made none since its creation " + age(now.Sub(c.CreationTimestamp.Time)) + " ago"
	if c.Status.LastScheduleTime != nil {
		made = "its last was for the tick at " + ev["lastScheduleTime"]
	}
	msg := fmt.Sprintf("%s made no RayJob for its tick at %s, %s ago (schedule %q in %s; %s): %s missed",
		what, ev["missedTick"], age(late), c.Spec.Schedule, sched.Zone, made, countOf(missed, "tick"))
	catchUp := fmt.Sprintf("; once it can, the operator makes one RayJob for each tick missed since %s (%s now), one after another: "+
		"KubeRay v1.7.0 has no startingDeadlineSeconds; to start afresh instead, delete the RayCronJob and create it again", ev["missedTick"], strconv.Itoa(missed))
	switch why, fix := ix.noCronController(); {
	case refused != nil:
		return finding(msg+": the operator refuses its spec: "+refused.describe(now),
			"fix the spec as the message says ("+edit+")"+catchUp)
	case why != "":
		return finding(msg+": "+why, fix+catchUp)
	}
	return finding(msg+": no Warning Event about it remains (the API server keeps Events an hour by default), and a running operator with the feature gate on was found",
		"read why in the operator's log ("+ix.operatorLogs()+" | grep "+c.Name+": a refused spec logs nothing there, so also kubectl get events -n "+c.Namespace+
			" --field-selector involvedObject.name="+c.Name+" right after any change to it)"+catchUp)
}

// noCronController says why no operator found runs a RayCronJob controller, and its fix; "" when
// one may (or the operators could not be seen).
func (ix *index) noCronController() (why, fix string) {
	if !ix.s.CanSee("deployments") {
		return "", ""
	}
	if len(ix.operators) == 0 {
		return "no KubeRay operator was found, and none makes its RayJobs", "install the KubeRay operator v1.7.0 or later with --feature-gates=RayCronJob=true"
	}
	var off []string
	for _, op := range ix.operators {
		v, err := version.ParseSemantic(op.Version)
		switch on, _ := op.FeatureGate("RayCronJob"); {
		case err == nil && v.LessThan(firstCronRelease):
			off = append(off, fmt.Sprintf("operator %s/%s is %s, which has no RayCronJob controller", op.Namespace, op.Name, op.Version))
		case !on:
			off = append(off, fmt.Sprintf("operator %s/%s does not turn on the feature gate RayCronJob (alpha, off by default), so it runs no RayCronJob controller", op.Namespace, op.Name))
		case op.ReadyReplicas == 0:
			off = append(off, fmt.Sprintf("operator %s/%s has no ready replica", op.Namespace, op.Name))
		default:
			return "", ""
		}
	}
	op := ix.operators[0]
	return strings.Join(off, "; "), fmt.Sprintf("run KubeRay v1.7.0 or later with the feature gate on: add --feature-gates=RayCronJob=true to the operator's args (kubectl edit deploy %s -n %s), or the Helm chart's featureGates", op.Name, op.Namespace)
}

// operatorTZ is the TZ of the operators found, "" (UTC) when none sets one or they differ.
func (ix *index) operatorTZ() string {
	tz := ""
	for i, op := range ix.operators {
		if i > 0 && op.TZ != tz {
			return ""
		}
		tz = op.TZ
	}
	return tz
}
