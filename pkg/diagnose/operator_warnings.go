package diagnose

import (
	"fmt"
	"sort"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
)

// The Warning reasons that say why a RayJob or a RayService cannot go on, and never come from a
// healthy one: each is a failed API call the operator retries (with controller-runtime's
// backoff), or a spec it refuses. Validation failures of RayJobs (InvalidRayJobSpec, …) are not
// here: the operator writes them into the status too, which rayjob-failed quotes. Failures that a
// healthy start also sees (FailedToUpdateServeApplications while the dashboard comes up) are not
// here either.
const (
	evRayClusterNotFound         = "RayClusterNotFound"            // spec.clusterSelector names a RayCluster that does not exist
	evFailedToCreateRayCluster   = "FailedToCreateRayCluster"      // the API server refused the RayCluster (RayJob, RayService)
	evFailedToCreateSubmitter    = "FailedToCreateRayJobSubmitter" // the API server refused the submitter Job
	evFailedToCreateService      = "FailedToCreateService"         // the API server refused a Service
	evFailedToDeleteRayCluster   = "FailedToDeleteRayCluster"      // the cluster could not be deleted (shutdownAfterJobFinishes, an old RayService cluster)
	evFailedToDeleteJobSubmitter = "FailedToDeleteRayJobSubmitter"
	evInvalidRayServiceSpec      = "InvalidRayServiceSpec" // the RayService's spec is refused: nothing is reconciled
	evInvalidRayServiceMetadata  = "InvalidRayServiceMetadata"
)

var warningReasons = map[string]map[string]bool{
	"RayJob": {evRayClusterNotFound: true, evFailedToCreateRayCluster: true, evFailedToCreateSubmitter: true,
		evFailedToCreateService: true, evFailedToDeleteRayCluster: true, evFailedToDeleteJobSubmitter: true},
	"RayService": {evFailedToCreateRayCluster: true, evFailedToCreateService: true, evFailedToDeleteRayCluster: true,
		evInvalidRayServiceSpec: true, evInvalidRayServiceMetadata: true},
	// KubeRay v1.7.0 refuses a RayCronJob's spec with this Event alone: its status has no field for it.
	"RayCronJob": {evInvalidRayCronJobSpec: true},
}

// KeepWarning reports whether an Event about a RayJob, RayService or RayCronJob is one rules read.
func KeepWarning(ev *corev1.Event) bool {
	return ev.Type == corev1.EventTypeWarning && warningReasons[ev.InvolvedObject.Kind][ev.Reason]
}

// opWarning is the operator's latest Warning about an object, with how often it was recorded.
type opWarning struct {
	reason, text string
	count        int
	last         time.Time
}

// warningAbout is the newest of the kept Warning Events about the object of kind, if it is
// fresher than refusalFresh (a failure that goes on is recorded again within that), with the
// count of every Event of its reason. nil when there is none.
func (ix *index) warningAbout(kind, namespace, name, uid string) *opWarning {
	return ix.warningWithin(kind, namespace, name, uid, refusalFresh)
}

// warningWithin is warningAbout with the freshness bound fresh (0: any age, for a refusal the
// operator records once and never again until the object changes).
func (ix *index) warningWithin(kind, namespace, name, uid string, fresh time.Duration) *opWarning {
	var evs []*corev1.Event
	for i := range ix.s.Events {
		ev := &ix.s.Events[i]
		o := ev.InvolvedObject
		if o.Kind != kind || !KeepWarning(ev) || o.Namespace != namespace || o.Name != name || (o.UID != "" && uid != "" && string(o.UID) != uid) {
			continue
		}
		evs = append(evs, ev)
	}
	if len(evs) == 0 {
		return nil
	}
	sort.SliceStable(evs, func(a, b int) bool {
		_, la := eventTimes(evs[a])
		_, lb := eventTimes(evs[b])
		return la.After(lb)
	})
	_, last := eventTimes(evs[0])
	if fresh > 0 && ix.s.Now.Sub(last) > fresh {
		return nil
	}
	w := &opWarning{reason: evs[0].Reason, text: strings.TrimPrefix(evs[0].Message, "(combined from similar events): "), last: last}
	for _, ev := range evs {
		if ev.Reason == w.reason {
			w.count += eventCount(ev)
		}
	}
	return w
}

// describe is the Warning as a finding quotes it: "<message> (3 Warning Events RayClusterNotFound,
// the last 20s ago)".
func (w *opWarning) describe(now time.Time) string {
	n := fmt.Sprintf("%d Warning Events %s, the last", w.count, w.reason)
	if w.count == 1 {
		n = "1 Warning Event " + w.reason + ","
	}
	return strings.TrimRight(strings.TrimSpace(w.text), ". ") + " (" + n + " " + age(now.Sub(w.last)) + " ago)"
}

// jobWarning is warningAbout for a RayJob.
func (ix *index) jobWarning(j *rayv1.RayJob) *opWarning {
	return ix.warningAbout("RayJob", j.Namespace, j.Name, string(j.UID))
}

// remedy is what to change, by the Warning's reason and the API server's words in it; kind and
// name are the object the Warning is about ("rayjob", "rayservice").
func (w *opWarning) remedy(kind, namespace, name string) string {
	ns := namespace
	switch {
	case w.reason == evInvalidRayServiceSpec || w.reason == evInvalidRayServiceMetadata:
		return "fix the spec as the message says (kubectl edit " + kind + " " + name + " -n " + ns + "); the operator reconciles it again once it changes"
	case w.reason == evRayClusterNotFound:
		return "create the RayCluster spec.clusterSelector names in " + ns + ", or point spec.clusterSelector (ray.io/cluster: <name>) at one that exists; the operator retries by itself"
	case quotaExceeded.MatchString(w.text):
		q := quotaExceeded.FindStringSubmatch(w.text)[1]
		return "the ResourceQuota " + q + " is used up: raise it or free what it counts (kubectl describe resourcequota " + q + " -n " + ns + "); the operator retries by itself"
	case webhookDenied.MatchString(w.text):
		hook := webhookDenied.FindStringSubmatch(w.text)[1]
		return "the admission webhook " + hook + " refuses it: change the " + kind + " as it asks, or ask its owners (kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations)"
	case strings.Contains(w.text, " is invalid"):
		return "the API server rejects what the operator made from the " + kind + ": fix the field quoted in its spec (kubectl edit " + kind + " " + name + " -n " + ns + ")"
	case strings.Contains(w.text, "forbidden"):
		return "the operator's service account may not do it: check its RBAC (kubectl auth can-i --as=system:serviceaccount:<operator namespace>:kuberay-operator …)"
	}
	return "kubectl describe " + kind + " " + name + " -n " + ns + " for the operator's Events"
}
