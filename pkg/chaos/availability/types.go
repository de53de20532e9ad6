// Package availability is what every experiment run under the probe reports of the service it
// probed (head-kill, drain, worker-kill, upgrade): the totals, the error window, the endpoints,
// the latency, the per-second bars, the events, the SLO verdict and the advice, built from the
// probe's records and the cluster's timeline, and written as text and JSON. Build is pure: same
// input, same report, byte for byte. Each experiment embeds Availability in its own report, with
// its own section beside it.
package availability

import (
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
)

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
	Probe    *probe.Result
	Timeline *timeline.Timeline
	SLO      SLO
	// WarmupFailed: the warm-up saw an error or no answer, so nothing was disrupted.
	WarmupFailed bool
	// Reference is the kind of the event times are relative to: the disruption (a head kill's
	// KillRequested, an upgrade's UpgradePatched); the probe start when it was never seen.
	Reference timeline.Kind
}

// Availability is the part of a report every experiment under the probe has, in the order its
// sections are shown; the experiment's own section goes between ErrorWindow and Endpoints (see
// JSON and WriteText). Times named ...Ms are relative to the disruption, else to the probe start.
type Availability struct {
	Totals      Totals     `json:"totals"`
	ErrorWindow *Window    `json:"errorWindow"` // null when there were no errors
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
