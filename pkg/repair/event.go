package repair

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

const (
	// EventReason is the reason of the Events heal records: listing Events with the field
	// selector reason=RayHeadHealed lists every heal.
	EventReason = "RayHeadHealed"
	// EventSource is the component the Events come from.
	EventSource = "kubectl-ray"
	// maxEventMessage keeps messages inside what every API version accepts (events.k8s.io
	// limits notes to 1 kB).
	maxEventMessage = 1000
)

// HealEvents are the core/v1 Events recording action a, one on the RayCluster and one on the old
// pod, so `kubectl describe` of either shows what heal did and why.
func HealEvents(a Action, at time.Time, dryRun bool) []*corev1.Event {
	verb := "deleted"
	action := "DeletePod"
	if a.Force() {
		verb, action = "force-deleted (grace period 0)", "ForceDeletePod"
	}
	if dryRun {
		verb = "would have " + verb + " (dry run)"
	}
	role := a.Role() // a worker delete is not counted as a head delete by head-recreate-loop
	// The summary, not the whole why: `kubectl describe` and `kubectl get events` show one line.
	why := a.Summary
	if why == "" {
		why = a.Why
	}
	msg := fmt.Sprintf("kubectl-ray heal %s %s pod %s (uid %s) for rule %s: %s", verb, role, a.Pod.Name, a.Pod.UID, a.Rule, why)
	podRef := podEventRef(a.Pod, a.ResourceVersion)
	clusterRef := clusterEventRef(a.Cluster, "")
	return []*corev1.Event{
		newEvent(clusterRef, &podRef, corev1.EventTypeNormal, EventReason, action, msg, at),
		newEvent(podRef, &clusterRef, corev1.EventTypeNormal, EventReason, action, msg, at),
	}
}

// newEvent is a core/v1 Event from heal about on, its message cut to what every API version
// accepts.
func newEvent(on corev1.ObjectReference, related *corev1.ObjectReference, typ, reason, action, msg string, at time.Time) *corev1.Event {
	if len(msg) > maxEventMessage {
		msg = msg[:maxEventMessage-3] + "..."
	}
	ts := metav1.NewTime(at)
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			// The name scheme of client-go's recorder: unique per object and instant.
			Name:      fmt.Sprintf("%s.%x", on.Name, at.UnixNano()),
			Namespace: on.Namespace,
		},
		InvolvedObject: on,
		Related:        related,
		Reason:         reason,
		Action:         action,
		Message:        msg,
		Type:           typ,
		Source:         corev1.EventSource{Component: EventSource},
		FirstTimestamp: ts,
		LastTimestamp:  ts,
		Count:          1,
	}
}

func clusterEventRef(c state.Ref, resourceVersion string) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "RayCluster", APIVersion: "ray.io/v1", Namespace: c.Namespace, Name: c.Name,
		UID: types.UID(c.UID), ResourceVersion: resourceVersion}
}

func podEventRef(p state.Ref, resourceVersion string) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name,
		UID: types.UID(p.UID), ResourceVersion: resourceVersion}
}

// EventReasonBackedOff is the reason of the Event the watchdog records when it leaves a cluster
// alone because its head is in a recreate loop (kuberay #4272).
const EventReasonBackedOff = "RayHealBackedOff"

// BackOffEvent records on the RayCluster that heal backed off, and why.
func BackOffEvent(sk Skip, at time.Time) *corev1.Event {
	msg := "the kubectl-ray heal watchdog leaves this cluster alone: " + sk.Why
	var related *corev1.ObjectReference
	if sk.Object.Kind == "Pod" {
		ref := podEventRef(sk.Object, "")
		related = &ref
	}
	return newEvent(clusterEventRef(sk.Cluster, ""), related, corev1.EventTypeWarning, EventReasonBackedOff, "BackOff", msg, at)
}
