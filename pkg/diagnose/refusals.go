package diagnose

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// How each operator version reports a pod it could not create (read in
// controllers/ray/raycluster_controller.go of each release). The API server's error is passed on
// as it is; the words (quota, LimitRange, Pod Security, webhook, validation) are Kubernetes'.
//   - v1.1.1: status.state "failed" and status.reason the error text (the reason is never cleared,
//     so it is read only while the state is failed), and a Warning Event PodReconciliationError
//     with the same text. Every reconcilePods error takes that path, deletions included, so only
//     an API server refusal of a pod counts here (refusedPodText).
//   - v1.5.0 and v1.6.0: the condition ReplicaFailure=True with reason FailedCreateHeadPod or
//     FailedCreateWorkerPod and the message "<reason>\n<error>", removed by the next reconcile
//     without an error, and the Warning Events FailedToCreateHeadPod ("Failed to create head Pod
//     <ns>/<name>, <error>") and FailedToCreateWorkerPod ("Failed to create worker Pod for the
//     cluster <ns>/<name>, <error>").
const (
	eventPodReconciliationError = "PodReconciliationError" // v1.1.1
	eventFailedToCreateHeadPod  = "FailedToCreateHeadPod"
	eventFailedToCreateWorker   = "FailedToCreateWorkerPod"
	condFailedCreateHeadPod     = "FailedCreateHeadPod"
	condFailedCreateWorkerPod   = "FailedCreateWorkerPod"
)

// refusalFresh is how old the last refusal Event may be and still explain a shortfall without a
// status record: the operator retries a failed reconcile with controller-runtime's backoff, at
// most 1000 s apart, so a refusal that goes on is recorded again within that.
const refusalFresh = 20 * time.Minute

// refusal is the API server refusing a pod the operator tried to create, as the operator reported
// it.
type refusal struct {
	role   string // "head" or "worker"; "" when the text does not say
	group  string // the worker group, when the refused pod's name says
	text   string // the API server's words
	status string // the status field the operator wrote it in, "" when only Events say it
	event  string // the Events' reason, "" when only the status says it
	count  int    // how many times the Events were recorded
	last   time.Time
	// since is when the refusals began, as far as the report shows: the status condition's
	// transition, else the first Event's time; zero when neither tells.
	since time.Time
}

// refusedPod matches an API server refusal of a pod: `pods "x" is forbidden: …` (quota,
// LimitRange, Pod Security), `Pod "x" is invalid: …` (validation) and webhook denials.
var refusedPod = regexp.MustCompile(`(?i)\bpods? "([^"]*)" is (forbidden|invalid)|admission webhook "[^"]*" denied the request`)

// refusedPodText is the refusal in an operator's message, from the API server's words on; "" when
// the message is about something else (v1.1.1's deletions, extra heads).
func refusedPodText(msg string) string {
	if loc := refusedPod.FindStringIndex(msg); loc != nil {
		return strings.TrimSpace(msg[loc[0]:])
	}
	return ""
}

// refusals are what the operator reported about c's pod creations, newest first per role: the
// status (current by how each version writes it) and the Events (for how often and how lately).
func (ix *index) refusals(c *clusterView) []refusal {
	var out []refusal
	st := c.rc.Status
	if cond := meta.FindStatusCondition(st.Conditions, string(rayv1.RayClusterReplicaFailure)); cond != nil && cond.Status == "True" &&
		(cond.Reason == condFailedCreateHeadPod || cond.Reason == condFailedCreateWorkerPod) {
		r := refusal{role: "worker", text: strings.TrimSpace(strings.TrimPrefix(cond.Message, cond.Reason)), status: "condition ReplicaFailure " + cond.Reason,
			since: cond.LastTransitionTime.Time}
		if cond.Reason == condFailedCreateHeadPod {
			r.role = "head"
		}
		out = append(out, r.named(c))
	}
	if st.State == rayv1.Failed {
		if t := refusedPodText(st.Reason); t != "" {
			out = append(out, refusal{text: t, status: "reason, with state failed"}.named(c))
		}
	}
	for _, ev := range ix.clusterEvents(c) {
		if ev.Type != corev1.EventTypeWarning {
			continue
		}
		var r refusal
		// client-go's recorder folds a burst of refusals into one Event with this prefix.
		msg := strings.TrimPrefix(ev.Message, "(combined from similar events): ")
		switch ev.Reason {
		case eventFailedToCreateHeadPod:
			r = refusal{role: "head", text: afterComma(msg)}
		case eventFailedToCreateWorker:
			r = refusal{role: "worker", text: afterComma(msg)}
		case eventPodReconciliationError:
			r = refusal{text: refusedPodText(msg)}
		}
		if r.text == "" {
			continue
		}
		if r.since, r.last = eventTimes(ev); ix.s.Now.Sub(r.last) > refusalFresh {
			continue
		}
		r.count, r.event = eventCount(ev), ev.Reason
		out = append(out, r.named(c))
	}
	return out
}

// afterComma is the error in "Failed to create head Pod <ns>/<name>, <error>" (the name is
// empty: heads are created with generateName).
func afterComma(msg string) string {
	if _, rest, ok := strings.Cut(msg, ", "); ok {
		return strings.TrimSpace(rest)
	}
	return strings.TrimSpace(msg)
}

// named fills the role and group from the refused pod's name, which KubeRay builds as
// "<cluster>-head-…" and, for workers, "<cluster>-worker-<group>-…" (v1.1.1) or
// "<cluster>-<group>-worker-…" (v1.5.0, v1.6.0; utils.PodName).
func (r refusal) named(c *clusterView) refusal {
	m := refusedPod.FindStringSubmatch(r.text)
	if m == nil || m[1] == "" {
		return r
	}
	name := strings.TrimPrefix(m[1], c.rc.Name+"-")
	switch {
	case strings.HasPrefix(name, "head-"):
		r.role = "head"
	case strings.HasPrefix(name, "worker-") || strings.Contains(name, "-worker-"):
		r.role = "worker"
		for _, g := range c.rc.Spec.WorkerGroupSpecs { // the longest match: "small" is a prefix of "small-group"
			if (strings.HasPrefix(name, "worker-"+g.GroupName+"-") || strings.HasPrefix(name, g.GroupName+"-worker-")) && len(g.GroupName) > len(r.group) {
				r.group = g.GroupName
			}
		}
	}
	return r
}

// refusalFor is the refusal reported for role (and group, when the report names one): the
// status record when there is one (it is current), with the Events' count and last time added up
// (every refusal is an Event of its own, since the refused pod's generated name differs, until
// client-go combines them), else the newest Event's words.
func (ix *index) refusalFor(c *clusterView, role, group string) *refusal {
	var status, events *refusal
	rs := ix.refusals(c)
	for i := range rs {
		r := &rs[i]
		if (r.role != "" && r.role != role) || (group != "" && r.group != "" && r.group != group) {
			continue
		}
		switch {
		case r.status != "":
			if status == nil {
				status = r
			}
		case events == nil:
			events = r
		default:
			if r.last.After(events.last) {
				events.text, events.event = r.text, r.event
			}
			events.last = later(events.last, r.last)
			if !r.since.IsZero() && (events.since.IsZero() || r.since.Before(events.since)) {
				events.since = r.since
			}
			events.count += r.count
		}
	}
	switch {
	case status != nil && events != nil:
		status.count, status.last, status.event = events.count, events.last, events.event
		if status.since.IsZero() {
			status.since = events.since
		}
		return status
	case status != nil:
		return status
	}
	return events
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// describe is the refusal as a finding quotes it: "<text> (the RayCluster's status condition
// ReplicaFailure FailedCreateWorkerPod; 14 Events FailedToCreateWorkerPod, the last 20s ago)".
func (r *refusal) describe(now time.Time) string {
	var where []string
	if r.status != "" {
		where = append(where, "the RayCluster's status "+r.status)
	}
	if r.event != "" {
		n := fmt.Sprintf("%d Events %s, the last", r.count, r.event)
		if r.count == 1 {
			n = "1 Event " + r.event + ","
		}
		where = append(where, n+" "+age(now.Sub(r.last))+" ago")
	}
	return strings.TrimRight(r.text, ". ") + " (" + strings.Join(where, "; ") + ")"
}

// source is where the operator reported it, for a finding's evidence.
func (r *refusal) source() string {
	var s []string
	if r.status != "" {
		s = append(s, "status "+r.status)
	}
	if r.event != "" {
		s = append(s, "Events "+r.event)
	}
	return strings.Join(s, "; ")
}

// Kubernetes' words for each admission that refuses pods (the API server's own messages).
var (
	quotaExceeded = regexp.MustCompile(`exceeded quota: ([^,\s]+)`)
	quotaNeeds    = regexp.MustCompile(`failed quota: ([^:\s]+): must specify`)
	limitRange    = regexp.MustCompile(`(maximum|minimum) \S+ usage per (Container|Pod)|limit to request ratio`)
	podSecurity   = regexp.MustCompile(`violates PodSecurity "([^"]+)"`)
	webhookDenied = regexp.MustCompile(`admission webhook "([^"]+)" denied the request`)
)

// remedy is what to change for the refusal's cause, read from the API server's words.
func (r *refusal) remedy(c *clusterView) string {
	ns, name := c.rc.Namespace, c.rc.Name
	switch {
	case quotaExceeded.MatchString(r.text):
		q := quotaExceeded.FindStringSubmatch(r.text)[1]
		return "the ResourceQuota " + q + " is used up: raise it or free what it counts (kubectl describe resourcequota " + q + " -n " + ns +
			"), or lower the cluster's requests or replicas; the operator retries by itself"
	case quotaNeeds.MatchString(r.text):
		q := quotaNeeds.FindStringSubmatch(r.text)[1]
		return "the ResourceQuota " + q + " counts requests or limits the pod template does not set: set them for every container of the group (kubectl describe resourcequota " +
			q + " -n " + ns + ")"
	case limitRange.MatchString(r.text):
		return "the pod template's resources fall outside the namespace's LimitRange: fit them within it (kubectl describe limitrange -n " + ns +
			") with kubectl edit raycluster " + name + " -n " + ns
	case podSecurity.MatchString(r.text):
		lvl := podSecurity.FindStringSubmatch(r.text)[1]
		return "the namespace enforces Pod Security " + lvl + ": make the pod template meet it (the fields quoted), or change the namespace's pod-security.kubernetes.io/enforce label"
	case webhookDenied.MatchString(r.text):
		w := webhookDenied.FindStringSubmatch(r.text)[1]
		return "the admission webhook " + w + " refuses the pod: change the pod template as it asks, or ask its owners (kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations)"
	case strings.Contains(r.text, " is invalid"):
		return "the API server rejects the pod template: fix the field quoted with kubectl edit raycluster " + name + " -n " + ns
	}
	return "read kubectl describe raycluster " + name + " -n " + ns + " for the operator's Events"
}
