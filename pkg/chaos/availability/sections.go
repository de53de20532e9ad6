package availability

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// The sections of an availability report, shared by the head-kill and upgrade reports so both
// read the same: totals, error window, per-endpoint table, latency, per-second bars, events and
// the verdict.

func writeTotals(p *Printer, w io.Writer, t Totals) {
	p.F("\nTotals\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(name string, v any) { fmt.Fprintf(tw, "  %s\t%v\n", name, v) }
	row("requests", t.Requests)
	row("2xx", t.Status2xx)
	if t.Status3xx > 0 {
		row("3xx", t.Status3xx)
	}
	if t.Status4xx > 0 {
		row("4xx", t.Status4xx)
	}
	row("502", t.Status502)
	row("503", t.Status503)
	row("504", t.Status504)
	row("other 5xx", t.Other5xx)
	row("connection errors", t.ConnectionErrors)
	row("timeouts", t.Timeouts)
	if t.Aborted > 0 {
		row("aborted (in flight at stop)", t.Aborted)
	}
	row("availability", fmt.Sprintf("%.3f%%", t.Availability))
	p.Keep(tw.Flush())
	p.F("  by status: %s\n", Counts(t.ByStatus))
	if len(t.ByClass) > 0 {
		p.F("  by error class: %s\n", Counts(t.ByClass))
	}
}

func writeErrorWindow(p *Printer, e *Window) {
	p.F("\nError window\n")
	if e == nil {
		p.F("  no errors\n")
		return
	}
	p.F("  first error  %s\n  last error   %s\n  longest run  %s in a row, %s to %s\n",
		Secs(e.FirstMs), Secs(e.LastMs), Plural(e.LongestRun.Requests, "request", "requests"), Secs(e.LongestRun.StartMs), Secs(e.LongestRun.EndMs))
}

func writeEndpoints(p *Printer, w io.Writer, rows []Endpoint) {
	p.F("\nEndpoints\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  ENDPOINT\tREQUESTS\tOK\tERRORS\t5XX\tCONN\tTIMEOUT\tAVAILABILITY\tFIRST ERROR\tLAST ERROR\n")
	for _, e := range rows {
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\t%d\t%.3f%%\t%s\t%s\n", e.Name, e.Requests, e.OK, e.Errors, e.Status5xx,
			e.ConnectionErrors, e.Timeouts, e.Availability, OptSecs(e.FirstErrorMs), OptSecs(e.LastErrorMs))
	}
	p.Keep(tw.Flush())
}

func writeLatency(p *Printer, l Latency) {
	p.F("\nLatency from scheduled send (%s)\n  p50 %.3fms  p90 %.3fms  p99 %.3fms  max %.3fms\n", Plural(int(l.Count), "request", "requests"), l.P50Ms, l.P90Ms, l.P99Ms, l.MaxMs)
}

func writeSeconds(p *Printer, seconds []Second, color bool) {
	p.F("\nTimeline, one row per second:")
	for _, c := range Classes {
		p.F("  %s %s", paint(c.Sym, c.Color, color), c.Name)
	}
	p.F("\n")
	peak := 1
	for _, s := range seconds {
		peak = max(peak, s.OK+s.S4xx+s.S5xx+s.Conn+s.Timeout)
	}
	for _, s := range seconds {
		var bar strings.Builder
		width := 0
		for _, c := range Classes {
			n := c.Count(s)
			if n == 0 {
				continue
			}
			k := max(1, (n*barWidth+peak/2)/peak)
			width += k
			bar.WriteString(paint(strings.Repeat(c.Sym, k), c.Color, color))
		}
		bad := s.S4xx + s.S5xx + s.Conn + s.Timeout
		note := ""
		if bad > 0 {
			note = fmt.Sprintf(" %d failed", bad)
		}
		if len(s.Events) > 0 {
			note += "  <- " + strings.Join(s.Events, ", ")
		}
		p.F("  %7s |%s%s| %4d%s\n", Secs(s.StartMs), bar.String(), strings.Repeat(" ", max(0, barWidth-width)), s.OK+bad, note)
	}
}

func writeEvents(p *Printer, events []Event) {
	if len(events) == 0 {
		return
	}
	p.F("\nEvents\n")
	for _, e := range events {
		p.F("  %9s  %s", Secs(e.AtMs), e.Kind)
		if e.Object != "" {
			p.F(" %s", e.Object)
		}
		if e.From != "" || e.To != "" {
			p.F(" %q -> %q", e.From, e.To)
		}
		if e.Detail != "" {
			p.F(" (%s)", e.Detail)
		}
		p.F("\n")
	}
}

func writeVerdict(p *Printer, v Verdict, color bool) {
	p.F("\nVerdict: ")
	switch {
	case len(v.Checks) == 0:
		p.F("no SLO given (use --max-errors or --min-availability)\n")
	case v.Passed:
		p.F("%s\n", paint("PASS", "\x1b[32m", color))
	default:
		p.F("%s\n", paint("FAIL", "\x1b[31m", color))
	}
	for _, c := range v.Checks {
		mark := "ok  "
		if !c.Passed {
			mark = "FAIL"
		}
		p.F("  %s %s: %s\n", mark, c.Name, c.Message)
	}
}
