package pressure

import (
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/schema"
)

// ReportKind identifies a disk-pressure or memory-pressure JSON document;
// docs/chaos-pressure.md documents the schema.
const ReportKind = "PressureReport"

// ReportSettings echo what was injected, so a saved report says what it measured.
type ReportSettings struct {
	Experiment      string `json:"experiment"` // disk-pressure | memory-pressure
	Namespace       string `json:"namespace"`
	Target          string `json:"target"` // the argument: "demo" (with Role) or "pod/NAME"
	Role            string `json:"role,omitempty"`
	Pod             string `json:"pod"`
	Node            string `json:"node"`
	Container       string `json:"container"` // our ephemeral container
	TargetContainer string `json:"targetContainer"`
	Image           string `json:"image"`
	Fill            string `json:"fill,omitempty"`    // disk: node | container
	Bytes           int64  `json:"bytes,omitempty"`   // fixed by the plugin; 0 when Percent is measured in the pod
	Percent         int    `json:"percent,omitempty"` // of what the container measures when it starts
	Basis           string `json:"basis"`             // where the amount came from, in words
	DurationMs      int64  `json:"durationMs"`
	WatchEviction   bool   `json:"watchEviction"`
	TimeoutMs       int64  `json:"timeoutMs,omitempty"`
}

// Report is one pressure run. Times named ...Ms are milliseconds after the injection.
type Report struct {
	APIVersion string               `json:"apiVersion"`
	Kind       string               `json:"kind"`
	Settings   ReportSettings       `json:"settings"`
	Injected   time.Time            `json:"injected"`
	Events     []availability.Event `json:"events"`
	Eviction   Eviction             `json:"eviction"`
	// Ramp is when memory-pressure's allocation was resident, from its container's log; null
	// for disk, without --watch-eviction, or when the log never said so while the run watched.
	Ramp    *Ramp   `json:"ramp"`
	Verdict Verdict `json:"verdict"`
}

// Ramp is memory-pressure's ramp as its container's log says it.
type Ramp struct {
	Bytes int64 `json:"bytes"`
	// ResidentMs is how long after the script's start every byte was resident (its own clock).
	ResidentMs float64 `json:"residentMs"`
	// SeenMs is when the run read that line, after the injection.
	SeenMs float64 `json:"seenMs"`
}

// Eviction is what happened to the pod; null times were not seen.
type Eviction struct {
	EvictedMs            *float64 `json:"evictedMs"`
	Replacement          string   `json:"replacement,omitempty"` // a head's replacement
	ReplacementRunningMs *float64 `json:"replacementRunningMs"`
	// EndedMs is when the target reached a terminal phase with no mark of an eviction, Ended that
	// phase ("Succeeded", "Failed (OOMKilled)").
	EndedMs *float64 `json:"endedMs"`
	Ended   string   `json:"ended,omitempty"`
	// Pods are every pod the kubelet evicted on the target's node while the run watched: the
	// target, and bystanders, in the order seen.
	Pods []EvictedPod `json:"pods"`
}

// EvictedPod is one pod the kubelet evicted during the run.
type EvictedPod struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	// Bystander: another pod of the node than the target.
	Bystander bool    `json:"bystander"`
	AtMs      float64 `json:"atMs"`
	Message   string  `json:"message"` // the kubelet's
}

// Pressure outcomes: the stable names of Verdict.Outcome.
const (
	OutcomeNotWatched       = "not-watched"         // injected without --watch-eviction: nothing judged
	OutcomeCameBack         = "came-back"           // an evicted head's replacement ran
	OutcomeNotReplaced      = "not-replaced"        // an evicted head was not replaced in time (fails)
	OutcomeEvicted          = "evicted"             // a worker (or pod) was evicted
	OutcomePodEnded         = "pod-ended"           // a worker (or pod) ended with no mark of an eviction
	OutcomePressureFailed   = "pressure-failed"     // our container exited non-zero, the pod still Running (fails)
	OutcomeNoEvictionEnded  = "no-eviction"         // our container ended, the pod still Running
	OutcomeNeverStarted     = "never-started"       // our container did not start in time (fails)
	OutcomeNoEvictionInTime = "no-eviction-in-time" // nothing happened within the timeout
)

// Verdict is the run's conclusion; Passed is false for a head not replaced and for
// pressure that never ran as asked.
type Verdict struct {
	Passed  bool   `json:"passed"`
	Outcome string `json:"outcome"`
	Message string `json:"message"`
}

// reportInput is everything buildReport needs.
type reportInput struct {
	Settings ReportSettings
	Injected time.Time
	Timeline *timeline.Timeline
	Verdict  Verdict
	Ramp     *Ramp
}

// buildReport computes the report; it is pure.
func buildReport(in reportInput) *Report {
	r := &Report{APIVersion: schema.APIVersion, Kind: ReportKind, Settings: in.Settings,
		Injected: in.Injected, Events: []availability.Event{}, Eviction: Eviction{Pods: []EvictedPod{}}, Ramp: in.Ramp, Verdict: in.Verdict}
	rel := func(t time.Time) float64 { return availability.Millis(t.Sub(in.Injected)) }
	for _, e := range in.Timeline.Events() {
		r.Events = append(r.Events, availability.Event{Event: e, AtMs: rel(e.At)})
		switch e.Kind {
		case timeline.PodEvicted:
			r.Eviction.Pods = append(r.Eviction.Pods, EvictedPod{Namespace: in.Settings.Namespace, Pod: e.Object, AtMs: rel(e.At), Message: e.Detail})
		case timeline.BystanderEvicted:
			ns, name, _ := strings.Cut(e.Object, "/")
			r.Eviction.Pods = append(r.Eviction.Pods, EvictedPod{Namespace: ns, Pod: name, Bystander: true, AtMs: rel(e.At), Message: e.Detail})
		}
	}
	if e, ok := in.Timeline.First(timeline.PodEnded, time.Time{}); ok {
		r.Eviction.EndedMs, r.Eviction.Ended = ptr.To(rel(e.At)), e.Detail
	}
	if e, ok := in.Timeline.First(timeline.PodEvicted, time.Time{}); ok {
		r.Eviction.EvictedMs = ptr.To(rel(e.At))
	}
	if e, ok := in.Timeline.First(timeline.NewHeadRunning, time.Time{}); ok {
		r.Eviction.Replacement = e.Object
		r.Eviction.ReplacementRunningMs = ptr.To(rel(e.At))
	} else if e, ok := in.Timeline.First(timeline.NewHeadCreated, time.Time{}); ok {
		r.Eviction.Replacement = e.Object
	}
	return r
}
