package availability

import (
	"fmt"
	"math"
	"strconv"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
)

// Measured is what Build measured: the probe's own run, the availability, and the disruption
// the times are relative to, for the experiment's own section.
type Measured struct {
	Probe ProbeInfo
	Availability
	// Disruption is the first event of the input's Reference kind (Disrupted false when none).
	Disruption timeline.Event
	Disrupted  bool
	// RelAt places a moment relative to the disruption (to the probe start when none).
	RelAt  func(time.Time) float64
	Result *probe.Result // the probe's result (empty when the input had none)
}

// Build computes the availability of a run. It reads in.Probe and in.Timeline and changes
// neither; the advice is the experiment's.
func Build(in Input) Measured {
	res := in.Probe
	if res == nil {
		res = &probe.Result{}
	}
	var m Measured

	// The zero point: the disruption if there was one, else the probe start. ref is its offset
	// from the probe start; every record offset minus ref is "relative to the disruption".
	var ref time.Duration
	m.Probe = ProbeInfo{Start: res.Start, Reference: "probeStart", ProbeRun: ProbeRun{ElapsedMs: Millis(res.Elapsed),
		Planned: probe.Planned(res.Rate, res.Duration), Scheduled: len(res.Records),
		Interrupted: res.Interrupted, Stopped: res.Stopped, WarmupFailed: in.WarmupFailed}}
	if res.Rate <= 0 || res.Duration <= 0 {
		m.Probe.Planned = len(res.Records)
	}
	m.Disruption, m.Disrupted = in.Timeline.First(in.Reference, time.Time{})
	if m.Disrupted {
		ref = m.Disruption.At.Sub(res.Start)
		m.Probe.Reference = "kill"
		m.Probe.KillAtMs = ptr(Millis(ref))
	}
	rel := func(d time.Duration) float64 { return Millis(d - ref) }
	m.RelAt = func(t time.Time) float64 { return rel(t.Sub(res.Start)) }
	m.Result = res

	m.Totals, m.Endpoints = totals(res, rel)
	m.ErrorWindow = errorWindow(res.Records, rel)
	m.Latency, m.Probe.SendLagP99Ms, m.Probe.SendLagMaxMs = latency(res.Records)
	m.Events = []Event{}
	for _, e := range in.Timeline.Events() {
		m.Events = append(m.Events, Event{Event: e, AtMs: m.RelAt(e.At)})
	}
	m.Seconds = seconds(res, in.Timeline, rel)
	m.Verdict = verdict(m.Totals, in.SLO, in.WarmupFailed)
	return m
}

// Millis is a duration as every report's ...Ms field carries it: milliseconds, rounded to the
// microsecond so reports are stable and readable.
func Millis(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

func ptr[T any](v T) *T { return &v }

// failed is every finished request that is not 2xx/3xx; canceled ones are not judged.
func failed(rec probe.Record) bool { return rec.Class != probe.ClassCanceled && !rec.OK() }

func totals(res *probe.Result, rel func(time.Duration) float64) (Totals, []Endpoint) {
	t := Totals{ByStatus: map[string]int{}, ByClass: map[string]int{}}
	rows := make([]Endpoint, len(res.Endpoints))
	for i, name := range res.Endpoints {
		rows[i] = Endpoint{Name: name, ByStatus: map[string]int{}}
	}
	var none *Endpoint // requests with no endpoint get a row only if there are any
	for _, rec := range res.Records {
		outcome := rec.Outcome()
		if outcome == probe.Aborted {
			t.Aborted++
			continue
		}
		var row *Endpoint
		if int(rec.Endpoint) < len(rows) {
			row = &rows[rec.Endpoint]
		} else {
			if none == nil {
				none = &Endpoint{Name: "(none)", ByStatus: map[string]int{}}
			}
			row = none
		}
		t.Requests++
		row.Requests++
		if rec.Class == probe.ClassHTTP {
			code := strconv.Itoa(int(rec.Status))
			t.ByStatus[code]++
			row.ByStatus[code]++
			switch s := rec.Status; {
			case s >= 200 && s < 300:
				t.Status2xx++
			case s >= 300 && s < 400:
				t.Status3xx++
			case s >= 400 && s < 500:
				t.Status4xx++
			case s == 502:
				t.Status502++
			case s == 503:
				t.Status503++
			case s == 504:
				t.Status504++
			case s >= 500:
				t.Other5xx++
			}
			if rec.Status >= 500 && rec.Status < 600 {
				row.Status5xx++
			}
		} else {
			t.ByClass[rec.Class.String()]++
			if outcome == probe.TimedOut {
				t.Timeouts++
				row.Timeouts++
			} else {
				t.ConnectionErrors++
				row.ConnectionErrors++
			}
		}
		if rec.OK() {
			row.OK++
			continue
		}
		t.Errors++
		row.Errors++
		at := rel(rec.Scheduled)
		if row.FirstErrorMs == nil {
			row.FirstErrorMs = ptr(at)
		}
		row.LastErrorMs = ptr(at)
	}
	t.Availability = availability(t.Requests-t.Errors, t.Requests)
	if none != nil {
		rows = append(rows, *none)
	}
	for i := range rows {
		rows[i].Availability = availability(rows[i].OK, rows[i].Requests)
	}
	return t, rows
}

// availability is the percentage of ok requests, for display: cut (not rounded) to 3 decimals,
// so one failure in a million reads 99.999%, never 100%.
func availability(ok, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(int64(ok)*100_000/int64(n)) / 1000
}

// meetsAvailability compares the exact ratio with min (a percentage), not the displayed figure:
// 201 errors in 200,000 requests (99.8995%) does not meet 99.9. The tolerance is far below one
// request, only there to absorb min's binary rounding (99.9 is not exact in a float).
func meetsAvailability(ok, n int, min float64) bool {
	return n > 0 && float64(ok)*100 >= min*float64(n)-1e-9*float64(n)
}

func errorWindow(recs []probe.Record, rel func(time.Duration) float64) *Window {
	var w *Window
	var cur, best Run
	for _, rec := range recs {
		if rec.Class == probe.ClassCanceled {
			continue
		}
		if !failed(rec) {
			cur = Run{}
			continue
		}
		at := rel(rec.Scheduled)
		if w == nil {
			w = &Window{FirstMs: at}
		}
		w.LastMs = at
		if cur.Requests == 0 {
			cur.StartMs = at
		}
		cur.Requests++
		cur.EndMs = at
		if cur.Requests > best.Requests {
			best = cur
		}
	}
	if w != nil {
		w.DurationMs = math.Round((w.LastMs-w.FirstMs)*1e3) / 1e3
		w.LongestRun = best
	}
	return w
}

// latency uses microsecond buckets up to an hour, far above any per-request timeout.
func latency(recs []probe.Record) (l Latency, lagP99, lagMax float64) {
	lat := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	lag := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	for _, rec := range recs {
		if rec.Class == probe.ClassCanceled || rec.Class == probe.ClassNoEndpoint {
			continue
		}
		_ = lat.RecordValue(max(1, rec.Latency.Microseconds()))
		_ = lag.RecordValue(max(1, (rec.Sent - rec.Scheduled).Microseconds()))
	}
	if lat.TotalCount() == 0 {
		return Latency{}, 0, 0
	}
	q := func(h *hdrhistogram.Histogram, p float64) float64 { return float64(h.ValueAtQuantile(p)) / 1e3 }
	return Latency{Count: lat.TotalCount(), P50Ms: q(lat, 50), P90Ms: q(lat, 90), P99Ms: q(lat, 99),
		MaxMs: float64(lat.Max()) / 1e3}, q(lag, 99), float64(lag.Max()) / 1e3
}

func seconds(res *probe.Result, tl *timeline.Timeline, rel func(time.Duration) float64) []Second {
	n := 0
	if len(res.Records) > 0 {
		n = int(res.Records[len(res.Records)-1].Scheduled/time.Second) + 1
	}
	out := make([]Second, n)
	for i := range out {
		out[i] = Second{Index: i, StartMs: rel(time.Duration(i) * time.Second)}
	}
	for _, rec := range res.Records {
		s := &out[int(rec.Scheduled/time.Second)]
		switch rec.Outcome() {
		case probe.Succeeded:
			s.OK++
		case probe.HTTPError:
			if rec.Status >= 500 {
				s.S5xx++
			} else {
				s.S4xx++
			}
		case probe.TimedOut:
			s.Timeout++
		case probe.ConnError:
			s.Conn++
		}
	}
	for _, e := range tl.Events() {
		d := e.At.Sub(res.Start)
		if i := int(d / time.Second); d >= 0 && i < n {
			out[i].Events = append(out[i].Events, string(e.Kind))
		}
	}
	return out
}

// verdict checks the SLO. A failed warm-up fails the verdict whatever the SLO: nothing was
// killed, so a passing SLO would say the head kill was harmless when it was never tried.
func verdict(t Totals, slo SLO, warmupFailed bool) Verdict {
	v := Verdict{Passed: true, Checks: []Check{}}
	if warmupFailed {
		v.Checks = append(v.Checks, Check{Name: "warm-up", Actual: float64(t.Errors),
			Message: fmt.Sprintf("%d of %s failed, so nothing was killed", t.Errors, Plural(t.Requests, "warm-up request", "warm-up requests"))})
	}
	if slo.MaxErrors != nil {
		c := Check{Name: "max-errors", Limit: float64(*slo.MaxErrors), Actual: float64(t.Errors)}
		c.Passed = int64(t.Errors) <= *slo.MaxErrors
		c.Message = Plural(t.Errors, "error", "errors") + ", at most " + strconv.FormatInt(*slo.MaxErrors, 10) + " allowed"
		v.Checks = append(v.Checks, c)
	}
	if slo.MinAvailability != nil {
		c := Check{Name: "min-availability", Limit: *slo.MinAvailability, Actual: t.Availability}
		c.Passed = meetsAvailability(t.Requests-t.Errors, t.Requests, *slo.MinAvailability)
		if t.Requests == 0 {
			c.Message = "no request finished, so availability is unknown"
		} else {
			c.Message = pct(t.Availability) + " available, at least " + pct(*slo.MinAvailability) + " required"
		}
		v.Checks = append(v.Checks, c)
	}
	for _, c := range v.Checks {
		v.Passed = v.Passed && c.Passed
	}
	return v
}

func pct(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) + "%" }
