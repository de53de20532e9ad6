package report

import (
	"fmt"
	"io"
	"time"
)

// What an experiment's own report (drain's, next to it in its package) takes from this one: the
// availability sections every report under the probe shows, in the same order and words.

// WriteAvailability writes the totals and the error window, then the experiment's own section
// (middle, which may be nil), then the endpoints, latency, per-second bars, events, verdict and
// advice of r.
func WriteAvailability(w io.Writer, r *Report, color bool, middle func(w io.Writer) error) error {
	p := &printer{w: w}
	writeTotals(p, w, r.Totals)
	writeErrorWindow(p, r.ErrorWindow)
	if middle != nil && p.e == nil {
		p.err(middle(w))
	}
	writeEndpoints(p, w, r.Endpoints)
	writeLatency(p, r.Latency)
	writeSeconds(p, r.Seconds, color)
	writeEvents(p, r.Events)
	writeVerdict(p, r.Verdict, color)
	if len(r.Advice) > 0 {
		p.f("\nAdvice\n")
		for _, a := range r.Advice {
			p.f("  - [%s %s] %s\n", a.Source, a.Rule, a.Text)
		}
	}
	return p.e
}

// Secs prints a millisecond offset as signed seconds (+1.234s), as every report does; OptSecs
// prints "-" for nil.
func Secs(ms float64) string { return secs(ms) }

func OptSecs(v *float64) string { return optSecs(v) }

// Millis is a duration as every report's ...Ms field carries it: milliseconds, to the microsecond.
func Millis(d time.Duration) float64 { return ms(d) }

// Counts prints a by-status or by-class map as the reports do: k=v, status codes in numeric order.
func Counts(m map[string]int) string { return kv(m) }

// StepAt prints a step's time (+1.234s, or "not seen" for nil), then sep and extra when given.
func StepAt(v *float64, sep, extra string) string { return stepValue(v, sep, extra) }

// RanLines are the lines under an experiment's title: how long the probe ran from its start, what
// the report's times are relative to (the disruption, e.g. "the cordon", atMs after the probe
// started; or the probe start, none saying why), and, when interrupted, how much was scheduled.
func RanLines(start time.Time, atMs *float64, run ProbeRun, disruption, none string) string {
	ref := "the probe start (" + none + ")"
	if atMs != nil {
		ref = fmt.Sprintf("%s, %s after the probe started", disruption, secs(*atMs))
	}
	out := fmt.Sprintf("Ran %s from %s; times below are relative to %s.\n", secs(run.ElapsedMs), start.UTC().Format("2006-01-02T15:04:05.000Z"), ref)
	if run.Interrupted {
		out += fmt.Sprintf("Interrupted: %d of %s were scheduled.\n", run.Scheduled, Plural(run.Planned, "planned request", "planned requests"))
	}
	return out
}
