package headkill

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
)

// WriteText renders the report for a person; color adds ANSI colors to the bars and verdict.
func WriteText(w io.Writer, r *Report, color bool) error {
	p := &availability.Printer{W: w}
	s := r.Settings
	if r.Probe.WarmupFailed {
		writeWarmupFailed(p, r)
		return p.Err
	}
	p.F("Head kill of %s in namespace %s (mode %s)\n", s.Cluster, s.Namespace, s.Mode)
	p.F("Probe: %s %s%s at %v/s, request timeout %dms, warm-up %dms", s.Method, s.Target, s.Path, s.Rate, s.RequestTimeout, s.WarmupMs)
	switch {
	case s.UntilRecovered:
		p.F(", until recovered (at most %dms)\n", s.TimeoutMs)
	default:
		p.F(", %dms after the kill\n", s.AfterMs)
	}
	ref := "the probe start (no kill was requested)"
	if r.Probe.KillAtMs != nil {
		ref = fmt.Sprintf("the kill, %s after the probe started", availability.Secs(*r.Probe.KillAtMs))
	}
	p.F("Ran %s from %s; times below are relative to %s.\n", availability.Secs(r.Probe.ElapsedMs), r.Probe.Start.UTC().Format("2006-01-02T15:04:05.000Z"), ref)
	switch {
	case r.Probe.Interrupted:
		p.F("Interrupted: %d of %s were scheduled.\n", r.Probe.Scheduled, availability.Plural(r.Probe.Planned, "planned request", "planned requests"))
	case r.Probe.Stopped && r.Probe.KillAtMs == nil:
		p.F("Stopped before the kill: %d of %s were scheduled.\n", r.Probe.Scheduled, availability.Plural(r.Probe.Planned, "planned request", "planned requests"))
	case r.Probe.Stopped:
		p.F("Stopped early once recovered: %d of %s were scheduled.\n", r.Probe.Scheduled, availability.Plural(r.Probe.Planned, "planned request", "planned requests"))
	}
	p.F("Probe schedule error: p99 %.3fms, max %.3fms.\n", r.Probe.SendLagP99Ms, r.Probe.SendLagMaxMs)

	if p.Err != nil {
		return p.Err
	}
	return availability.WriteText(w, &r.Availability, color, func(w io.Writer) error { return writeRecovery(w, r) })
}

// writeRecovery is the head kill's own section: the steps of the recovery, from the kill.
func writeRecovery(w io.Writer, r *Report) error {
	if r.Probe.KillAtMs == nil {
		return nil
	}
	p := &availability.Printer{W: w}
	rc := r.Recovery
	p.F("\nRecovery (from the kill)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	step := func(name string, v *float64, extra string) {
		fmt.Fprintf(tw, "  %s\t%s\n", name, availability.StepAt(v, "\t", extra))
	}
	step("old head gone", rc.OldHeadGoneMs, rc.OldHead)
	step("new head created", rc.NewHeadCreatedMs, rc.NewHead)
	step("new head scheduled", rc.NewHeadScheduledMs, "")
	step("new head Running", rc.NewHeadRunningMs, "")
	step("new head Ready", rc.NewHeadReadyMs, "")
	if rc.RayClusterStayedReady {
		fmt.Fprintf(tw, "  RayCluster ready\tstayed ready\n")
	} else {
		step("RayCluster ready", rc.RayClusterReadyMs, "")
	}
	if r.Settings.TracksEndpoints() {
		step("endpoints back", rc.EndpointsBackMs, "")
	} else {
		fmt.Fprintf(tw, "  endpoints\t%s\n", endpointsNotTracked)
	}
	p.Keep(tw.Flush())
	if rc.ActiveClusterChanged {
		p.F("  RayService active cluster changed: %s -> %s\n", rc.ActiveClusterFrom, rc.ActiveClusterTo)
	}
	return p.Err
}

// endpointsNotTracked stands for "endpoints back" with a URL target: the probe does not follow
// a Service's endpoints then, so there is no time to show, and "not seen" would read as a failure.
const endpointsNotTracked = "not tracked with --target"

// writeWarmupFailed is the whole text report of a run that killed nothing: that first, then
// what the warm-up's requests got, the errors by status and class.
func writeWarmupFailed(p *availability.Printer, r *Report) {
	s, t := r.Settings, r.Totals
	p.F("Nothing was killed: the warm-up failed, so the head of %s in namespace %s was left alone.\n", s.Cluster, s.Namespace)
	p.F("  probe     %s %s%s at %v/s, warm-up %s, request timeout %dms\n", s.Method, s.Target, s.Path, s.Rate, time.Duration(s.WarmupMs)*time.Millisecond, s.RequestTimeout)
	p.F("  requests  %d ok, %d failed\n", t.Status2xx+t.Status3xx, t.Errors)
	failed := map[string]int{}
	for code, n := range t.ByStatus {
		if c, err := strconv.Atoi(code); err == nil && c >= 400 {
			failed[code] = n
		}
	}
	if len(failed) > 0 {
		p.F("  by status: %s\n", availability.Counts(failed))
	}
	if len(t.ByClass) > 0 {
		p.F("  by error class: %s\n", availability.Counts(t.ByClass))
	}
	if t.Aborted > 0 {
		p.F("  aborted (in flight at stop): %d\n", t.Aborted)
	}
}
