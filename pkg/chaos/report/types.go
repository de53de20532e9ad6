// Package report turns what a head-kill saw (probe records, cluster timeline) into a Report and
// renders it as text, JSON, JUnit or HTML. Build is pure: same input, same report, byte for byte.
package report

import (
	"strings"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
)

// Kind identifies the JSON document, with schema.APIVersion; docs/chaos-head-kill.md documents
// the schema.
const Kind = "HeadKillReport"

// Settings echo what was asked, so a saved report says what it measured.
type Settings struct {
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
func (s Settings) TracksEndpoints() bool { return strings.HasPrefix(s.Target, "service/") }

// SLO is what the run must hold; a nil field is not checked.
type SLO struct {
	MaxErrors       *int64
	MinAvailability *float64 // percent, e.g. 99.9
}

// Advice is one suggestion. Source "observed" comes from this run; "doctor" from doctor's rules.
type Advice struct {
	Source string `json:"source"`
	Rule   string `json:"rule"`
	Text   string `json:"text"`
}

// Input is everything Build needs.
type Input struct {
	Settings Settings
	Probe    *probe.Result
	Timeline *timeline.Timeline
	SLO      SLO
	// Advice from doctor's RayService rules (serve-head-in-service, serve-head-has-cpus, gcs-ft-off),
	// appended after what this run observed.
	Advice []Advice
	// WarmupFailed: the warm-up saw an error or no answer, so nothing was killed.
	WarmupFailed bool
	// Reference is the kind of the event times are relative to: KillRequested when empty
	// (an upgrade's is UpgradePatched).
	Reference timeline.Kind
}

// Report is the whole result. Times named ...Ms are milliseconds relative to Reference: the kill
// when one was requested, else the probe's start.
type Report struct {
	APIVersion  string     `json:"apiVersion"`
	Kind        string     `json:"kind"`
	Settings    Settings   `json:"settings"`
	Probe       ProbeInfo  `json:"probe"`
	Totals      Totals     `json:"totals"`
	ErrorWindow *Window    `json:"errorWindow"` // null when there were no errors
	Recovery    Recovery   `json:"recovery"`
	Endpoints   []Endpoint `json:"endpoints"`
	Latency     Latency    `json:"latency"`
	Seconds     []Second   `json:"seconds"`
	Events      []Event    `json:"events"`
	Verdict     Verdict    `json:"verdict"`
	Advice      []Advice   `json:"advice"`
}

// ProbeInfo says how the probe itself went.
type ProbeInfo struct {
	Start     time.Time `json:"start"`
	Reference string    `json:"reference"` // "kill" or "probeStart"
	KillAtMs  *float64  `json:"killAtMs"`  // kill relative to the probe start
	ProbeRun
}

// ProbeRun is how the probe ran, in every report of a run under the probe (head-kill's and the
// upgrade's). Embedded, its fields are in the JSON object of the report's probe.
type ProbeRun struct {
	ElapsedMs   float64 `json:"elapsedMs"`
	Planned     int     `json:"planned"`   // requests the schedule planned for the asked duration
	Scheduled   int     `json:"scheduled"` // requests actually scheduled (fewer if stopped)
	Interrupted bool    `json:"interrupted"`
	Stopped     bool    `json:"stopped"`
	// WarmupFailed: a warm-up request failed (or none was answered), so nothing was killed;
	// the report covers the warm-up only.
	WarmupFailed bool `json:"warmupFailed"`
	// SendLag is the probe's own schedule error (actual send - scheduled send).
	SendLagP99Ms float64 `json:"sendLagP99Ms"`
	SendLagMaxMs float64 `json:"sendLagMaxMs"`
}

// Totals count finished requests. Canceled requests (in flight at Ctrl-C) are only in Aborted.
type Totals struct {
	Requests         int            `json:"requests"`
	Status2xx        int            `json:"status2xx"`
	Status3xx        int            `json:"status3xx"`
	Status4xx        int            `json:"status4xx"`
	Status502        int            `json:"status502"`
	Status503        int            `json:"status503"`
	Status504        int            `json:"status504"`
	Other5xx         int            `json:"other5xx"`
	ConnectionErrors int            `json:"connectionErrors"` // refused, reset, dns, other, no-endpoint
	Timeouts         int            `json:"timeouts"`
	Errors           int            `json:"errors"` // everything but 2xx and 3xx
	Aborted          int            `json:"aborted"`
	Availability     float64        `json:"availabilityPercent"` // (2xx+3xx)/requests; 0 if none
	ByStatus         map[string]int `json:"byStatus"`
	ByClass          map[string]int `json:"byClass"` // error classes below HTTP, zero counts left out
}

// Window is when errors happened.
type Window struct {
	FirstMs    float64 `json:"firstMs"` // scheduled time of the first failed request
	LastMs     float64 `json:"lastMs"`
	DurationMs float64 `json:"durationMs"`
	LongestRun Run     `json:"longestRun"`
}

// Run is the longest stretch of consecutive failed requests in schedule order.
type Run struct {
	Requests int     `json:"requests"`
	StartMs  float64 `json:"startMs"`
	EndMs    float64 `json:"endMs"`
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

// Endpoint is one row of the per-endpoint table.
type Endpoint struct {
	Name             string         `json:"name"`
	Requests         int            `json:"requests"`
	OK               int            `json:"ok"`
	Errors           int            `json:"errors"`
	Status5xx        int            `json:"status5xx"`
	ConnectionErrors int            `json:"connectionErrors"`
	Timeouts         int            `json:"timeouts"`
	Availability     float64        `json:"availabilityPercent"`
	ByStatus         map[string]int `json:"byStatus"`
	FirstErrorMs     *float64       `json:"firstErrorMs"`
	LastErrorMs      *float64       `json:"lastErrorMs"`
}

// Latency is from each request's scheduled send to its outcome, over finished requests that were
// sent (HTTP answers and transport errors), from an HDR histogram with 3 significant digits.
type Latency struct {
	Count int64   `json:"count"`
	P50Ms float64 `json:"p50Ms"`
	P90Ms float64 `json:"p90Ms"`
	P99Ms float64 `json:"p99Ms"`
	MaxMs float64 `json:"maxMs"`
}

// Second is one bar of the timeline: requests scheduled in [Start, Start+1s) of the probe.
type Second struct {
	Index   int      `json:"index"`   // seconds since the probe start
	StartMs float64  `json:"startMs"` // relative to the reference
	OK      int      `json:"ok"`
	S4xx    int      `json:"status4xx"`
	S5xx    int      `json:"status5xx"`
	Conn    int      `json:"connectionErrors"`
	Timeout int      `json:"timeouts"`
	Events  []string `json:"events,omitempty"` // kinds of the events seen in this second
}

// Event is a timeline event placed relative to the reference.
type Event struct {
	timeline.Event
	AtMs float64 `json:"atMs"`
}

// Verdict is the SLO outcome; Passed is true when every check passed (or there were none).
type Verdict struct {
	Passed bool    `json:"passed"`
	Checks []Check `json:"checks"`
}

// Check is one SLO.
type Check struct {
	Name    string  `json:"name"` // "max-errors", "min-availability", or "warm-up" when it failed
	Limit   float64 `json:"limit"`
	Actual  float64 `json:"actual"`
	Passed  bool    `json:"passed"`
	Message string  `json:"message"`
}
