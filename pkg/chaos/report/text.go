package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// barWidth is the widest per-second bar in the terminal timeline.
const barWidth = 40

// Bar symbols differ by shape, so the timeline reads without color too.
var classes = []struct {
	name, sym, color string
	count            func(Second) int
}{
	{"2xx/3xx", "█", "\x1b[32m", func(s Second) int { return s.OK }},
	{"4xx", "x", "\x1b[33m", func(s Second) int { return s.S4xx }},
	{"5xx", "X", "\x1b[31m", func(s Second) int { return s.S5xx }},
	{"connection", "C", "\x1b[35m", func(s Second) int { return s.Conn }},
	{"timeout", "T", "\x1b[34m", func(s Second) int { return s.Timeout }},
}

const reset = "\x1b[0m"

// WriteText renders the report for a person; color adds ANSI colors to the bars and verdict.
func WriteText(w io.Writer, r *Report, color bool) error {
	p := &printer{w: w}
	s := r.Settings
	if r.Probe.WarmupFailed {
		writeWarmupFailed(p, r)
		return p.e
	}
	p.f("Head kill of %s in namespace %s (mode %s)\n", s.Cluster, s.Namespace, s.Mode)
	p.f("Probe: %s %s%s at %v/s, request timeout %dms, warm-up %dms", s.Method, s.Target, s.Path, s.Rate, s.RequestTimeout, s.WarmupMs)
	switch {
	case s.UntilRecovered:
		p.f(", until recovered (at most %dms)\n", s.TimeoutMs)
	default:
		p.f(", %dms after the kill\n", s.AfterMs)
	}
	ref := "the probe start (no kill was requested)"
	if r.Probe.KillAtMs != nil {
		ref = fmt.Sprintf("the kill, %s after the probe started", secs(*r.Probe.KillAtMs))
	}
	p.f("Ran %s from %s; times below are relative to %s.\n", secs(r.Probe.ElapsedMs), r.Probe.Start.UTC().Format("2006-01-02T15:04:05.000Z"), ref)
	switch {
	case r.Probe.Interrupted:
		p.f("Interrupted: %d of %s were scheduled.\n", r.Probe.Scheduled, Plural(r.Probe.Planned, "planned request", "planned requests"))
	case r.Probe.Stopped && r.Probe.KillAtMs == nil:
		p.f("Stopped before the kill: %d of %s were scheduled.\n", r.Probe.Scheduled, Plural(r.Probe.Planned, "planned request", "planned requests"))
	case r.Probe.Stopped:
		p.f("Stopped early once recovered: %d of %s were scheduled.\n", r.Probe.Scheduled, Plural(r.Probe.Planned, "planned request", "planned requests"))
	}
	p.f("Probe schedule error: p99 %.3fms, max %.3fms.\n", r.Probe.SendLagP99Ms, r.Probe.SendLagMaxMs)

	if p.e != nil {
		return p.e
	}
	return WriteAvailability(w, r, color, func(w io.Writer) error { return writeRecovery(w, r) })
}

// writeRecovery is the head kill's own section: the steps of the recovery, from the kill.
func writeRecovery(w io.Writer, r *Report) error {
	if r.Probe.KillAtMs == nil {
		return nil
	}
	p := &printer{w: w}
	rc := r.Recovery
	p.f("\nRecovery (from the kill)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	step := func(name string, v *float64, extra string) {
		fmt.Fprintf(tw, "  %s\t%s\n", name, stepValue(v, "\t", extra))
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
	p.err(tw.Flush())
	if rc.ActiveClusterChanged {
		p.f("  RayService active cluster changed: %s -> %s\n", rc.ActiveClusterFrom, rc.ActiveClusterTo)
	}
	return p.e
}

// endpointsNotTracked stands for "endpoints back" with a URL target: the probe does not follow
// a Service's endpoints then, so there is no time to show, and "not seen" would read as a failure.
const endpointsNotTracked = "not tracked with --target"

// writeWarmupFailed is the whole text report of a run that killed nothing: that first, then
// what the warm-up's requests got, the errors by status and class.
func writeWarmupFailed(p *printer, r *Report) {
	s, t := r.Settings, r.Totals
	p.f("Nothing was killed: the warm-up failed, so the head of %s in namespace %s was left alone.\n", s.Cluster, s.Namespace)
	p.f("  probe     %s %s%s at %v/s, warm-up %s, request timeout %dms\n", s.Method, s.Target, s.Path, s.Rate, time.Duration(s.WarmupMs)*time.Millisecond, s.RequestTimeout)
	p.f("  requests  %d ok, %d failed\n", t.Status2xx+t.Status3xx, t.Errors)
	failed := map[string]int{}
	for code, n := range t.ByStatus {
		if c, err := strconv.Atoi(code); err == nil && c >= 400 {
			failed[code] = n
		}
	}
	if len(failed) > 0 {
		p.f("  by status: %s\n", kv(failed))
	}
	if len(t.ByClass) > 0 {
		p.f("  by error class: %s\n", kv(t.ByClass))
	}
	if t.Aborted > 0 {
		p.f("  aborted (in flight at stop): %d\n", t.Aborted)
	}
}

// printer keeps the first write error so the layout code stays readable.
type printer struct {
	w io.Writer
	e error
}

func (p *printer) f(format string, a ...any) {
	if p.e == nil {
		_, p.e = fmt.Fprintf(p.w, format, a...)
	}
}

func (p *printer) err(err error) {
	if p.e == nil {
		p.e = err
	}
}

func paint(s, color string, on bool) string {
	if !on {
		return s
	}
	return color + s + reset
}

// secs prints a millisecond offset as signed seconds: +1.234s, -10.000s.
// stepValue is when a step of the recovery or the upgrade was seen ("not seen" when it was not),
// then extra, after sep.
func stepValue(v *float64, sep, extra string) string {
	val := "not seen"
	if v != nil {
		val = secs(*v)
	}
	if extra != "" {
		val += sep + extra
	}
	return val
}

func secs(msv float64) string {
	if msv < 0 {
		return fmt.Sprintf("-%.3fs", -msv/1000)
	}
	return fmt.Sprintf("+%.3fs", msv/1000)
}

func optSecs(v *float64) string {
	if v == nil {
		return "-"
	}
	return secs(*v)
}

// kv prints a count map sorted by key (numerically when the keys are status codes).
func kv(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		ai, aerr := strconv.Atoi(a)
		bi, berr := strconv.Atoi(b)
		if aerr == nil && berr == nil {
			return ai - bi
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}
