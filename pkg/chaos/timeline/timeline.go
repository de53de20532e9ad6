// Package timeline holds what happened to the cluster during an experiment (a head kill, disk or
// memory pressure), as typed, timestamped events. It is pure: the runners' watches append events;
// the reports read them.
package timeline

import (
	"slices"
	"time"
)

// Kind is the type of an event. The strings are stable: they appear in JSON reports.
type Kind string

const (
	KillRequested    Kind = "KillRequested"  // Object: the head pod; Detail: the mode (delete|force|evict)
	KillRefused      Kind = "KillRefused"    // the API refused (e.g. an eviction blocked by a PDB: 429)
	OldHeadGone      Kind = "OldHeadGone"    // the killed pod is gone from the API (or terminal)
	NewHeadCreated   Kind = "NewHeadCreated" // Object: the new head pod
	NewHeadScheduled Kind = "NewHeadScheduled"
	NewHeadRunning   Kind = "NewHeadRunning"
	NewHeadReady     Kind = "NewHeadReady"
	EndpointAdded    Kind = "EndpointAdded"   // Object: the pod now behind the Service (or a port-forward)
	EndpointRemoved  Kind = "EndpointRemoved" // Object: the pod that left
	// RayClusterState: From and To are .status.state values (e.g. "ready", "suspended", "").
	RayClusterState Kind = "RayClusterState"
	// RayServiceActiveCluster / RayServicePendingCluster: From and To are RayCluster names. A
	// change of the active cluster is seed 003's "KubeRay spins up an entirely new cluster".
	RayServiceActiveCluster  Kind = "RayServiceActiveCluster"
	RayServicePendingCluster Kind = "RayServicePendingCluster"

	// Upgrade runs (chaos upgrade): the patch, then KubeRay's steps. A pending cluster appearing is
	// RayServicePendingCluster, the switch RayServiceActiveCluster.
	UpgradePatched    Kind = "UpgradePatched"    // Object: the RayService; Detail: what the patch changes
	PendingHeadReady  Kind = "PendingHeadReady"  // Object: the pending cluster's head pod; Detail: the cluster
	ServeAppsReady    Kind = "ServeAppsReady"    // Object: the cluster whose Serve apps are all RUNNING; Detail: the apps
	OldClusterDeleted Kind = "OldClusterDeleted" // Object: the cluster active before the patch
	UpgradeRefused    Kind = "UpgradeRefused"    // the API refused the patch; Detail: why
	// An incremental upgrade's steps (NewClusterWithIncrementalUpgrade), as the RayService's
	// status reports them. Object: the RayCluster; From and To: percentages ("0%" -> "50%").
	ServeTargetCapacity Kind = "ServeTargetCapacity" // the share of Serve capacity the operator gave the cluster
	TrafficRouted       Kind = "TrafficRouted"       // the share of the HTTPRoute's traffic weighted to the cluster
	// UpgradeRollingBack: the RayService's RollbackInProgress condition turned True. Object: the
	// RayService; Detail: the condition's message.
	UpgradeRollingBack Kind = "UpgradeRollingBack"

	// Pressure runs (disk-pressure, memory-pressure); NewHeadCreated and NewHeadRunning above
	// name the evicted head's replacement.
	PressureInjected Kind = "PressureInjected" // Object: our ephemeral container
	PressureStarted  Kind = "PressureStarted"  // Object: our ephemeral container
	PressureExited   Kind = "PressureExited"   // Object: our ephemeral container; Detail: exit code and reason
	// PressureReached: our container's log says all it allocates is resident (memory). Object:
	// our ephemeral container; Detail: the bytes and how long after the script's start.
	PressureReached Kind = "PressureReached"
	NodePressure    Kind = "NodePressure" // Object: the node; Detail: the condition (DiskPressure, ...)
	NodeTainted     Kind = "NodeTainted"  // Object: the node; Detail: the taint key:effect
	PodEvicted      Kind = "PodEvicted"   // Object: the target pod; Detail: the kubelet's message
	PodDeleted      Kind = "PodDeleted"   // Object: the target pod
	// PodEnded: the target reached a terminal phase with no mark of an eviction (no Evicted
	// reason, DisruptionTarget condition or Evicted Event). Detail: the phase (and reason).
	PodEnded Kind = "PodEnded"
	// BystanderEvicted: the kubelet evicted another pod of the target's node. Object:
	// NAMESPACE/NAME; Detail: the kubelet's message.
	BystanderEvicted Kind = "BystanderEvicted"

	// Runs that take pods away (chaos drain, worker-kill): the node cordoned or the workers killed,
	// each pod's eviction (or delete: its Detail says), and the Ray pods KubeRay makes instead.
	// Pods are NAMESPACE/NAME.
	NodeCordoned      Kind = "NodeCordoned"      // Object: the node; Detail: "already cordoned" when it was
	NodeUncordoned    Kind = "NodeUncordoned"    // Object: the node, uncordoned as the run ended
	WorkersKilled     Kind = "WorkersKilled"     // Object: the RayCluster; Detail: the mode and how many
	EvictionRequested Kind = "EvictionRequested" // Object: the pod; Detail: evict or delete
	EvictionAccepted  Kind = "EvictionAccepted"  // Object: the pod: the API server accepted the eviction (or delete)
	EvictionRefused   Kind = "EvictionRefused"   // Object: the pod; Detail: the budget and the server's words (429)
	EvictionFailed    Kind = "EvictionFailed"    // Object: the pod; Detail: why it was given up (an error, --timeout)
	PodGone           Kind = "PodGone"           // Object: a pod the step took, gone from the API
	RayPodCreated     Kind = "RayPodCreated"     // Object: a Ray pod created after the drain began; Detail: its role and group
	RayPodScheduled   Kind = "RayPodScheduled"   // Object: that pod; Detail: the node
	RayPodReady       Kind = "RayPodReady"       // Object: that pod
)

// Event is one thing seen. At is when the watch saw it on this machine's clock (the same clock
// as the probe), not an API timestamp, which has only one-second resolution.
type Event struct {
	Kind   Kind      `json:"kind"`
	At     time.Time `json:"-"`
	Object string    `json:"object,omitempty"`
	From   string    `json:"from,omitempty"`
	To     string    `json:"to,omitempty"`
	Detail string    `json:"detail,omitempty"`
	// Message is the event in words, for reports that print one line per event.
	Message string `json:"message,omitempty"`
}

// Timeline is an ordered list of events. The zero value is empty and ready to use. It is not
// safe for concurrent use: the command funnels watch events through one goroutine.
type Timeline struct {
	events []Event
}

// New builds a timeline from events in any order.
func New(events ...Event) *Timeline {
	t := &Timeline{}
	for _, e := range events {
		t.Add(e)
	}
	return t
}

// Add inserts e in time order; events with equal times keep the order they were added in.
func (t *Timeline) Add(e Event) {
	i := len(t.events)
	for i > 0 && t.events[i-1].At.After(e.At) {
		i--
	}
	t.events = slices.Insert(t.events, i, e)
}

// Events returns the events in time order (a copy).
func (t *Timeline) Events() []Event {
	if t == nil {
		return nil
	}
	return slices.Clone(t.events)
}

// First returns the earliest event of kind at or after since.
func (t *Timeline) First(kind Kind, since time.Time) (Event, bool) {
	if t == nil {
		return Event{}, false
	}
	for _, e := range t.events {
		if e.Kind == kind && !e.At.Before(since) {
			return e, true
		}
	}
	return Event{}, false
}

// Kill is the first KillRequested event, the zero point of the report.
func (t *Timeline) Kill() (Event, bool) { return t.First(KillRequested, time.Time{}) }

// EndpointsAt replays EndpointAdded/EndpointRemoved up to and including at.
func (t *Timeline) EndpointsAt(at time.Time) []string {
	var set []string
	if t == nil {
		return nil
	}
	for _, e := range t.events {
		if e.At.After(at) {
			break
		}
		switch e.Kind {
		case EndpointAdded:
			if !slices.Contains(set, e.Object) {
				set = append(set, e.Object)
			}
		case EndpointRemoved:
			set = slices.DeleteFunc(set, func(s string) bool { return s == e.Object })
		}
	}
	return set
}

// EndpointsBack is when, after since, the number of endpoints first returned to what it was at
// since, having dropped below it. ok is false if it never dropped or never came back.
func (t *Timeline) EndpointsBack(since time.Time) (at time.Time, ok bool) {
	if t == nil {
		return time.Time{}, false
	}
	want := len(t.EndpointsAt(since))
	dropped := false
	for _, e := range t.events {
		if !e.At.After(since) || (e.Kind != EndpointAdded && e.Kind != EndpointRemoved) {
			continue
		}
		n := len(t.EndpointsAt(e.At))
		if n < want {
			dropped = true
		} else if dropped {
			return e.At, true
		}
	}
	return time.Time{}, false
}
