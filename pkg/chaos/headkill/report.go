package headkill

import (
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/schema"
)

// Kind identifies the JSON document, with schema.APIVersion; docs/chaos-head-kill.md documents
// the schema.
const ReportKind = "HeadKillReport"

// ReportSettings echo what was asked, so a saved report says what it measured.
type ReportSettings struct {
	Cluster        string  `json:"cluster"` // "demo" or "rayservice/demo"
	Namespace      string  `json:"namespace"`
	Mode           string  `json:"mode"`   // delete|force|evict
	Target         string  `json:"target"` // the probed URL or "service/NAME:PORT"
	Method         string  `json:"method"`
	Path           string  `json:"path"`
	Rate           float64 `json:"rate"` // requests per second
	WarmupMs       int64   `json:"warmupMs"`
	AfterMs        int64   `json:"afterMs,omitempty"`
	UntilRecovered bool    `json:"untilRecovered,omitempty"`
	TimeoutMs      int64   `json:"timeoutMs,omitempty"` // --timeout with --until-recovered
	RequestTimeout int64   `json:"requestTimeoutMs"`
}

// TracksEndpoints is whether the probe followed a Service's endpoints (a Service target), so
// that "endpoints back" has a meaning; a URL target has none.
func (s ReportSettings) TracksEndpoints() bool { return strings.HasPrefix(s.Target, "service/") }

// Input is everything Build needs.
type Input struct {
	Settings ReportSettings
	Probe    *probe.Result
	Timeline *timeline.Timeline
	SLO      availability.SLO
	// Advice from doctor's RayService rules (serve-head-in-service, serve-head-has-cpus, gcs-ft-off),
	// appended after what this run observed.
	Advice []availability.Advice
	// WarmupFailed: the warm-up saw an error or no answer, so nothing was killed.
	WarmupFailed bool
}

// Report is one head kill: the availability around the kill, and the recovery. Times named ...Ms
// are milliseconds relative to the kill when one was requested, else to the probe's start.
type Report struct {
	APIVersion string                 `json:"apiVersion"`
	Kind       string                 `json:"kind"`
	Settings   ReportSettings         `json:"settings"`
	Probe      availability.ProbeInfo `json:"probe"`

	availability.Availability `json:"-"`
	Recovery                  Recovery `json:"-"`
}

// MarshalJSON writes the recovery after the error window, where the schema has it.
func (r Report) MarshalJSON() ([]byte, error) {
	type head Report
	return availability.JSON(head(r), &r.Availability, "recovery", r.Recovery)
}

// Build computes the report. It reads in.Probe and in.Timeline and changes neither.
func Build(in Input) *Report {
	m := availability.Build(availability.Input{Probe: in.Probe, Timeline: in.Timeline, SLO: in.SLO, WarmupFailed: in.WarmupFailed,
		Reference: timeline.KillRequested})
	r := &Report{APIVersion: schema.APIVersion, Kind: ReportKind, Settings: in.Settings, Probe: m.Probe, Availability: m.Availability}
	r.Recovery = recovery(in.Timeline, m.Disruption, m.Disrupted, m.RelAt)
	r.Advice = append(observedAdvice(r, m.Disruption, m.Disrupted, m.Result), in.Advice...)
	if r.Advice == nil {
		r.Advice = []availability.Advice{}
	}
	return r
}

// Recovery times are relative to the kill; null when not seen.
type Recovery struct {
	OldHeadGoneMs      *float64 `json:"oldHeadGoneMs"`
	NewHeadCreatedMs   *float64 `json:"newHeadCreatedMs"`
	NewHeadScheduledMs *float64 `json:"newHeadScheduledMs"`
	NewHeadRunningMs   *float64 `json:"newHeadRunningMs"`
	NewHeadReadyMs     *float64 `json:"newHeadReadyMs"`
	RayClusterReadyMs  *float64 `json:"rayClusterReadyMs"`
	// RayClusterStayedReady: the RayCluster was ready at the kill and its state never changed
	// after it (KubeRay v1.1.1 keeps "ready" through a head restart), so there is no time to show.
	RayClusterStayedReady bool     `json:"rayClusterStayedReady"`
	EndpointsBackMs       *float64 `json:"endpointsBackMs"`
	OldHead               string   `json:"oldHead,omitempty"`
	NewHead               string   `json:"newHead,omitempty"`
	// ActiveClusterChanged: the RayService moved traffic to another RayCluster after the kill.
	ActiveClusterChanged bool   `json:"activeClusterChanged"`
	ActiveClusterFrom    string `json:"activeClusterFrom,omitempty"`
	ActiveClusterTo      string `json:"activeClusterTo,omitempty"`
}
