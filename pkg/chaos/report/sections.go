package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// The sections of an availability report, shared by the head-kill and upgrade reports so both
// read the same: totals, error window, per-endpoint table, latency, per-second bars, events and
// the verdict.

func writeTotals(p *printer, w io.Writer, t Totals) {
	p.f("\nTotals\n")
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
	p.err(tw.Flush())
	p.f("  by status: %s\n", kv(t.ByStatus))
	if len(t.ByClass) > 0 {
		p.f("  by error class: %s\n", kv(t.ByClass))
	}
}

func writeErrorWindow(p *printer, e *Window) {
	p.f("\nError window\n")
	if e == nil {
		p.f("  no errors\n")
		return
	}
	p.f("  first error  %s\n  last error   %s\n  longest run  %s in a row, %s to %s\n",
		secs(e.FirstMs), secs(e.LastMs), Plural(e.LongestRun.Requests, "request", "requests"), secs(e.LongestRun.StartMs), secs(e.LongestRun.EndMs))
}

func writeEndpoints(p *printer, w io.Writer, rows []Endpoint) {
	p.f("\nEndpoints\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  ENDPOINT\tREQUESTS\tOK\tERRORS\t5XX\tCONN\tTIMEOUT\tAVAILABILITY\tFIRST ERROR\tLAST ERROR\n")
	for _, e := range rows {
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\t%d\t%.3f%%\t%s\t%s\n", e.Name, e.Requests, e.OK, e.Errors, e.Status5xx,
			e.ConnectionErrors, e.Timeouts, e.Availability, optSecs(e.FirstErrorMs), optSecs(e.LastErrorMs))
	}
	p.err(tw.Flush())
}

func writeLatency(p *printer, l Latency) {
	p.f("\nLatency from scheduled send (%s)\n  p50 %.3fms  p90 %.3fms  p99 %.3fms  max %.3fms\n", Plural(int(l.Count), "request", "requests"), l.P50Ms, l.P90Ms, l.P99Ms, l.MaxMs)
}

func writeSeconds(p *printer, seconds []Second, color bool) {
	p.f("\nTimeline, one row per second:")
	for _, c := range classes {
		p.f("  %s %s", paint(c.sym, c.color, color), c.name)
	}
	p.f("\n")
	peak := 1
	for _, s := range seconds {
		peak = max(peak, s.OK+s.S4xx+s.S5xx+s.Conn+s.Timeout)
	}
	for _, s := range seconds {
		var bar strings.Builder
		width := 0
		for _, c := range classes {
			n := c.count(s)
			if n == 0 {
				continue
			}
			k := max(1, (n*barWidth+peak/2)/peak)
			width += k
			bar.WriteString(paint(strings.Repeat(c.sym, k), c.color, color))
		}
		bad := s.S4xx + s.S5xx + s.Conn + s.Timeout
		note := ""
		if bad > 0 {
			note = fmt.Sprintf(" %d failed", bad)
		}
		if len(s.Events) > 0 {
			note += "  <- " + strings.Join(s.Events, ", ")
		}
		p.f("  %7s |%s%s| %4d%s\n", secs(s.StartMs), bar.String(), strings.Repeat(" ", max(0, barWidth-width)), s.OK+bad, note)
	}
}

func writeEvents(p *printer, events []Event) {
	if len(events) == 0 {
		return
	}
	p.f("\nEvents\n")
	for _, e := range events {
		p.f("  %9s  %s", secs(e.AtMs), e.Kind)
		if e.Object != "" {
			p.f(" %s", e.Object)
		}
		if e.From != "" || e.To != "" {
			p.f(" %q -> %q", e.From, e.To)
		}
		if e.Detail != "" {
			p.f(" (%s)", e.Detail)
		}
		p.f("\n")
	}
}

func writeVerdict(p *printer, v Verdict, color bool) {
	p.f("\nVerdict: ")
	switch {
	case len(v.Checks) == 0:
		p.f("no SLO given (use --max-errors or --min-availability)\n")
	case v.Passed:
		p.f("%s\n", paint("PASS", "\x1b[32m", color))
	default:
		p.f("%s\n", paint("FAIL", "\x1b[31m", color))
	}
	for _, c := range v.Checks {
		mark := "ok  "
		if !c.Passed {
			mark = "FAIL"
		}
		p.f("  %s %s: %s\n", mark, c.Name, c.Message)
	}
}
