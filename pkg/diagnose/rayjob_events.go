package diagnose

import (
	"fmt"
	"sort"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
)

// JobEventFieldSelector selects the Events doctor reads about RayJobs: the operator's Warnings.
// KubeRay v1.5.0 and v1.6.0 record them (rayjob_controller.go); v1.1.1 records none about a
// RayJob, so there the rules fall back to what the status says. One paged LIST per doctor run,
// filtered by KeepJobEvent as pages arrive.
const JobEventFieldSelector = "involvedObject.kind=RayJob,type=Warning"

// The Warning reasons that say why a RayJob cannot go on, and never come from a healthy RayJob:
// each is a failed API call the operator retries (with controller-runtime's backoff), and the
// RayJob stays where it was (Initializing, for all but the deletes). Validation failures
// (InvalidRayJobSpec, …) are not here: the operator writes them into the status too, which
// rayjob-failed quotes.
const (
	evRayClusterNotFound         = "RayClusterNotFound"            // spec.clusterSelector names a RayCluster that does not exist
	evFailedToCreateRayCluster   = "FailedToCreateRayCluster"      // the API server refused the RayCluster
	evFailedToCreateSubmitter    = "FailedToCreateRayJobSubmitter" // the API server refused the submitter Job
	evFailedToCreateJobService   = "FailedToCreateService"         // the API server refused a Service (spec.submitterConfig / head service)
	evFailedToDeleteJobCluster   = "FailedToDeleteRayCluster"      // shutdownAfterJobFinishes could not delete the cluster
	evFailedToDeleteJobSubmitter = "FailedToDeleteRayJobSubmitter"
)

var jobWarningReasons = map[string]bool{evRayClusterNotFound: true, evFailedToCreateRayCluster: true, evFailedToCreateSubmitter: true,
	evFailedToCreateJobService: true, evFailedToDeleteJobCluster: true, evFailedToDeleteJobSubmitter: true}

// KeepJobEvent reports whether a RayJob Event is one rules read.
func KeepJobEvent(ev *corev1.Event) bool {
	return ev.Type == corev1.EventTypeWarning && ev.InvolvedObject.Kind == "RayJob" && jobWarningReasons[ev.Reason]
}

// jobWarning is the operator's latest Warning about a RayJob, with how often it was recorded.
type jobWarning struct {
	reason, text string
	count        int
	last         time.Time
}

// jobWarning is the newest of the RayJob's kept Warning Events, if it is fresher than
// refusalFresh (a failure that goes on is recorded again within that), with the count of every
// Event of its reason. nil when there is none.
func (ix *index) jobWarning(j *rayv1.RayJob) *jobWarning {
	var evs []*corev1.Event
	for i := range ix.s.Events {
		ev := &ix.s.Events[i]
		o := ev.InvolvedObject
		if !KeepJobEvent(ev) || o.Namespace != j.Namespace || o.Name != j.Name || (o.UID != "" && j.UID != "" && o.UID != j.UID) {
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
	if ix.s.Now.Sub(last) > refusalFresh {
		return nil
	}
	w := &jobWarning{reason: evs[0].Reason, text: strings.TrimPrefix(evs[0].Message, "(combined from similar events): "), last: last}
	for _, ev := range evs {
		if ev.Reason == w.reason {
			w.count += eventCount(ev)
		}
	}
	return w
}

// describe is the Warning as a finding quotes it: "<message> (3 Warning Events RayClusterNotFound,
// the last 20s ago)".
func (w *jobWarning) describe(now time.Time) string {
	n := fmt.Sprintf("%d Warning Events %s, the last", w.count, w.reason)
	if w.count == 1 {
		n = "1 Warning Event " + w.reason + ","
	}
	return strings.TrimRight(strings.TrimSpace(w.text), ". ") + " (" + n + " " + age(now.Sub(w.last)) + " ago)"
}

// remedy is what to change, by the Warning's reason and the API server's words in it.
func (w *jobWarning) remedy(j *rayv1.RayJob) string {
	ns := j.Namespace
	switch {
	case w.reason == evRayClusterNotFound:
		return "create the RayCluster spec.clusterSelector names in " + ns + ", or point spec.clusterSelector (ray.io/cluster: <name>) at one that exists; the operator retries by itself"
	case quotaExceeded.MatchString(w.text):
		q := quotaExceeded.FindStringSubmatch(w.text)[1]
		return "the ResourceQuota " + q + " is used up: raise it or free what it counts (kubectl describe resourcequota " + q + " -n " + ns + "); the operator retries by itself"
	case webhookDenied.MatchString(w.text):
		hook := webhookDenied.FindStringSubmatch(w.text)[1]
		return "the admission webhook " + hook + " refuses it: change the RayJob as it asks, or ask its owners (kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations)"
	case strings.Contains(w.text, " is invalid"):
		return "the API server rejects what the operator made from the RayJob: fix the field quoted in the RayJob's spec (kubectl edit rayjob " + j.Name + " -n " + ns + ")"
	case strings.Contains(w.text, "forbidden"):
		return "the operator's service account may not do it: check its RBAC (kubectl auth can-i --as=system:serviceaccount:<operator namespace>:kuberay-operator …)"
	}
	return "kubectl describe rayjob " + j.Name + " -n " + ns + " for the operator's Events"
}
