package diagnose

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The reasons of the Events that record a head leaving or arriving, per KubeRay version (read in
// controllers/ray/raycluster_controller.go of each release):
//   - v1.1.1 records reason "Deleted" with "Deleted head Pod <name>; Pod status: ...; Ray container
//     terminated status: ..." and reason "Created" with "Created head pod <name>";
//   - v1.5.0 and v1.6.0 record "DeletedHeadPod" ("Deleted head Pod <ns>/<name>; Pod status: ...")
//     and "CreatedHeadPod" ("Created head Pod <ns>/<name>");
//   - heal records "RayHeadHealed" ("kubectl-ray heal deleted head pod <name> ...").
const (
	eventDeletedHeadPod = "DeletedHeadPod"
	eventDeletedV111    = "Deleted"
	eventHealed         = "RayHeadHealed"
)

// headDeleted says whether ev records a head pod deleted, and by whom ("operator" or "heal").
// Creations are not read: the selector leaves them on the server (see EventFieldSelector).
func headDeleted(ev *corev1.Event) (deleted bool, by string) {
	switch ev.Reason {
	case eventDeletedHeadPod:
		return true, "operator"
	case eventDeletedV111:
		return strings.HasPrefix(ev.Message, "Deleted head Pod "), "operator"
	case eventHealed:
		return strings.Contains(ev.Message, " head pod "), "heal"
	}
	return false, ""
}

// KeepEvent reports whether a listed Event is one a rule reads: a head deleted, a pod the
// operator could not create (refusals.go), or a spec it refused (rules_spec_invalid.go). The loader drops the others as their page arrives
// (v1.1.1's reason Deleted also names worker pods, Services, ...).
func KeepEvent(ev *corev1.Event) bool {
	if d, _ := headDeleted(ev); d {
		return true
	}
	switch ev.Reason {
	case eventFailedToCreateHeadPod, eventFailedToCreateWorker, eventInvalidSpec, eventInvalidMetadata:
		return ev.Type == corev1.EventTypeWarning
	case eventPodReconciliationError:
		return ev.Type == corev1.EventTypeWarning && refusedPodText(ev.Message) != ""
	}
	return false
}

// eventTimes are the first and last time an Event was observed, whichever API wrote it
// (core/v1 recorders fill First/LastTimestamp; events.k8s.io ones EventTime and Series).
func eventTimes(ev *corev1.Event) (first, last time.Time) {
	first, last = ev.FirstTimestamp.Time, ev.LastTimestamp.Time
	if first.IsZero() {
		first = ev.EventTime.Time
	}
	if ev.Series != nil && ev.Series.LastObservedTime.After(last) {
		last = ev.Series.LastObservedTime.Time
	}
	if last.IsZero() {
		last = first
	}
	if first.IsZero() {
		first = ev.CreationTimestamp.Time
		if last.IsZero() {
			last = first
		}
	}
	return first, last
}

// eventCount is how many times an Event was observed (at least once).
func eventCount(ev *corev1.Event) int {
	n := int(ev.Count)
	if ev.Series != nil && int(ev.Series.Count) > n {
		n = int(ev.Series.Count)
	}
	return max(n, 1)
}

// The operator prints the Ray container's terminated state with %v:
// "&ContainerStateTerminated{ExitCode:1,Signal:0,Reason:Error,Message:...}".
var (
	termExitCode = regexp.MustCompile(`ExitCode:(-?\d+)`)
	termReason   = regexp.MustCompile(`ContainerStateTerminated\{[^}]*?Reason:([A-Za-z]*)`)
)

// exitFromMessage reads the exit code and reason the operator quoted, ok false when it quoted
// none (terminated status <nil>: the pod failed without its Ray container terminating).
func exitFromMessage(msg string) (code int, reason string, ok bool) {
	m := termExitCode.FindStringSubmatch(msg)
	if m == nil {
		return 0, "", false
	}
	code, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, "", false
	}
	if r := termReason.FindStringSubmatch(msg); r != nil {
		reason = r[1]
	}
	return code, reason, true
}
