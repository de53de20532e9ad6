package availability

import (
	"fmt"
	"io"
	"time"
)

// WriteText writes the availability sections every report under the probe shows, in the same
// order and words: the totals and the error window, then the experiment's own section
// (middle, which may be nil), then the endpoints, latency, per-second bars, events, verdict and
// advice of r.
func WriteText(w io.Writer, r *Availability, color bool, middle func(w io.Writer) error) error {
	p := &Printer{W: w}
	writeTotals(p, w, r.Totals)
	writeErrorWindow(p, r.ErrorWindow)
	if middle != nil && p.Err == nil {
		p.Keep(middle(w))
	}
	writeEndpoints(p, w, r.Endpoints)
	writeLatency(p, r.Latency)
	writeSeconds(p, r.Seconds, color)
	writeEvents(p, r.Events)
	writeVerdict(p, r.Verdict, color)
	if len(r.Advice) > 0 {
		p.F("\nAdvice\n")
		for _, a := range r.Advice {
			p.F("  - [%s %s] %s\n", a.Source, a.Rule, a.Text)
		}
	}
	return p.Err
}

// RanLines are the lines under an experiment's title: how long the probe ran from its start, what
// the report's times are relative to (the disruption, e.g. "the cordon", atMs after the probe
// started; or the probe start, none saying why), and, when interrupted, how much was scheduled.
func RanLines(start time.Time, atMs *float64, run ProbeRun, disruption, none string) string {
	ref := "the probe start (" + none + ")"
	if atMs != nil {
		ref = fmt.Sprintf("%s, %s after the probe started", disruption, Secs(*atMs))
	}
	out := fmt.Sprintf("Ran %s from %s; times below are relative to %s.\n", Secs(run.ElapsedMs), start.UTC().Format("2006-01-02T15:04:05.000Z"), ref)
	if run.Interrupted {
		out += fmt.Sprintf("Interrupted: %d of %s were scheduled.\n", run.Scheduled, Plural(run.Planned, "planned request", "planned requests"))
	}
	return out
}
