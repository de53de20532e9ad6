package headkill

import (
	"fmt"
	"html/template"
	"io"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
)

// SVG chart geometry, in SVG user units.
const (
	chartHeight = 200
	chartLeft   = 40
	chartTop    = 20
	chartWidth  = 960
)

var svgColors = []string{"#2e7d32", "#f9a825", "#c62828", "#6a1b9a", "#1565c0"}

type svgRect struct {
	X, Y, W, H float64
	Fill, Tip  string
}

type svgMark struct {
	X     float64
	Label string
}

type htmlData struct {
	R             *Report
	Rects         []svgRect
	Marks         []svgMark
	Legend        []svgRect
	Peak          int
	Height, Width int
	Left, Top     float64
	Bottom, Right float64
	Status        []kvRow
	Classes       []kvRow
	Recovery      []kvRow
}

type kvRow struct{ K, V string }

// WriteHTML writes one self-contained page: inline CSS and SVG, no scripts, no external assets.
func WriteHTML(w io.Writer, r *Report) error {
	d := htmlData{R: r, Height: chartHeight + chartTop + 40, Width: chartLeft + chartWidth + 20,
		Left: chartLeft, Top: chartTop, Bottom: chartTop + chartHeight, Right: chartLeft + chartWidth}
	d.Peak = 1
	for _, s := range r.Seconds {
		d.Peak = max(d.Peak, s.OK+s.S4xx+s.S5xx+s.Conn+s.Timeout)
	}
	n := max(1, len(r.Seconds))
	bw := float64(chartWidth) / float64(n)
	for i, s := range r.Seconds {
		y := float64(chartTop + chartHeight)
		for ci, c := range availability.Classes {
			v := c.Count(s)
			if v == 0 {
				continue
			}
			h := float64(v) / float64(d.Peak) * chartHeight
			y -= h
			d.Rects = append(d.Rects, svgRect{X: chartLeft + float64(i)*bw, Y: y, W: bw * 0.9, H: h, Fill: svgColors[ci],
				Tip: fmt.Sprintf("%s: %d %s", availability.Secs(s.StartMs), v, c.Name)})
		}
	}
	// Events go where they happened inside their second, using the probe-relative offset.
	var killAt float64
	if r.Probe.KillAtMs != nil {
		killAt = *r.Probe.KillAtMs
	}
	for _, e := range r.Events {
		sec := (e.AtMs + killAt) / 1000
		if sec < 0 || sec > float64(n) {
			continue
		}
		label := string(e.Kind)
		if e.Object != "" {
			label += " " + e.Object
		}
		d.Marks = append(d.Marks, svgMark{X: chartLeft + sec*bw, Label: availability.Secs(e.AtMs) + " " + label})
	}
	for ci, c := range availability.Classes {
		d.Legend = append(d.Legend, svgRect{X: float64(chartLeft + ci*130), Fill: svgColors[ci], Tip: c.Name})
	}
	t := r.Totals
	for _, row := range []kvRow{{"requests", fmt.Sprint(t.Requests)}, {"2xx", fmt.Sprint(t.Status2xx)}, {"3xx", fmt.Sprint(t.Status3xx)},
		{"4xx", fmt.Sprint(t.Status4xx)}, {"502", fmt.Sprint(t.Status502)}, {"503", fmt.Sprint(t.Status503)},
		{"504", fmt.Sprint(t.Status504)}, {"other 5xx", fmt.Sprint(t.Other5xx)}, {"connection errors", fmt.Sprint(t.ConnectionErrors)},
		{"timeouts", fmt.Sprint(t.Timeouts)}, {"aborted", fmt.Sprint(t.Aborted)}, {"availability", fmt.Sprintf("%.3f%%", t.Availability)}} {
		d.Status = append(d.Status, row)
	}
	d.Classes = []kvRow{{"by status", availability.Counts(t.ByStatus)}, {"by error class", availability.Counts(t.ByClass)}}
	rc := r.Recovery
	for _, s := range []struct {
		k string
		v *float64
	}{{"old head gone", rc.OldHeadGoneMs}, {"new head created", rc.NewHeadCreatedMs}, {"new head scheduled", rc.NewHeadScheduledMs},
		{"new head Running", rc.NewHeadRunningMs}, {"new head Ready", rc.NewHeadReadyMs}, {"RayCluster ready", rc.RayClusterReadyMs},
		{"endpoints back", rc.EndpointsBackMs}} {
		v := availability.OptSecs(s.v)
		switch {
		case s.k == "RayCluster ready" && rc.RayClusterStayedReady:
			v = "stayed ready"
		case s.k == "endpoints back" && !r.Settings.TracksEndpoints():
			v = endpointsNotTracked
		}
		d.Recovery = append(d.Recovery, kvRow{s.k, v})
	}
	return htmlPage.Execute(w, d)
}

var htmlPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"secs": availability.Secs, "opt": availability.OptSecs, "plural": availability.Plural,
	"f1":  func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"f3":  func(f float64) string { return fmt.Sprintf("%.3f", f) },
	"add": func(a, b float64) float64 { return a + b },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Head kill: {{.R.Settings.Namespace}}/{{.R.Settings.Cluster}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
.pass{color:#2e7d32;font-weight:bold}.fail{color:#c62828;font-weight:bold}
svg text{font-size:11px;font-family:system-ui,sans-serif}
</style></head><body>
<h1>Head kill of {{.R.Settings.Cluster}} in {{.R.Settings.Namespace}}</h1>
<p>Mode {{.R.Settings.Mode}}; probe {{.R.Settings.Method}} {{.R.Settings.Target}}{{.R.Settings.Path}} at {{.R.Settings.Rate}}/s,
request timeout {{.R.Settings.RequestTimeout}}ms. Started {{.R.Probe.Start.UTC.Format "2006-01-02T15:04:05.000Z"}}.
Times are relative to {{if eq .R.Probe.Reference "kill"}}the kill{{else}}the probe start{{end}}.</p>
{{if .R.Probe.WarmupFailed}}<p class="fail">Nothing was killed: the warm-up failed ({{.R.Totals.Errors}} of {{plural .R.Totals.Requests "request" "requests"}} failed), so the head was left alone. The figures below are the warm-up's.</p>
{{end}}<h2>Verdict: {{if not .R.Verdict.Checks}}no SLO given{{else if .R.Verdict.Passed}}<span class="pass">PASS</span>{{else}}<span class="fail">FAIL</span>{{end}}</h2>
{{if .R.Verdict.Checks}}<table><tr><th>SLO</th><th>limit</th><th>actual</th><th>result</th></tr>
{{range .R.Verdict.Checks}}<tr><td>{{.Name}}</td><td>{{.Limit}}</td><td>{{.Actual}}</td><td>{{if .Passed}}<span class="pass">pass</span>{{else}}<span class="fail">fail</span>{{end}}</td></tr>
{{end}}</table>{{end}}
<h2>Timeline</h2>
<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="requests per second by status class">
<line x1="{{.Left}}" y1="{{.Bottom}}" x2="{{.Right}}" y2="{{.Bottom}}" stroke="#888"/>
<text x="{{.Left}}" y="{{.Top}}" text-anchor="end" dx="-4">{{.Peak}}/s</text>
{{range .Rects}}<rect x="{{f1 .X}}" y="{{f1 .Y}}" width="{{f1 .W}}" height="{{f1 .H}}" fill="{{.Fill}}"><title>{{.Tip}}</title></rect>
{{end}}{{range .Marks}}<line x1="{{f1 .X}}" y1="{{$.Top}}" x2="{{f1 .X}}" y2="{{$.Bottom}}" stroke="#000" stroke-dasharray="3,2"><title>{{.Label}}</title></line>
{{end}}{{range .Legend}}<rect x="{{f1 .X}}" y="{{add 20.0 $.Bottom}}" width="10" height="10" fill="{{.Fill}}"/><text x="{{f1 (add 14.0 .X)}}" y="{{add 29.0 $.Bottom}}">{{.Tip}}</text>
{{end}}</svg>
{{if .R.Events}}<h2>Events</h2><table><tr><th>event</th><th>at</th><th>object</th><th>change</th><th>detail</th></tr>
{{range .R.Events}}<tr><td>{{.Kind}}</td><td>{{secs .AtMs}}</td><td>{{.Object}}</td><td>{{if or .From .To}}{{.From}} → {{.To}}{{end}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>{{end}}
<h2>Totals</h2><table>{{range .Status}}<tr><td>{{.K}}</td><td>{{.V}}</td></tr>{{end}}
{{range .Classes}}<tr><td>{{.K}}</td><td>{{.V}}</td></tr>{{end}}</table>
<h2>Error window</h2>{{with .R.ErrorWindow}}<table><tr><td>first error</td><td>{{secs .FirstMs}}</td></tr>
<tr><td>last error</td><td>{{secs .LastMs}}</td></tr><tr><td>longest run</td><td>{{plural .LongestRun.Requests "request" "requests"}}, {{secs .LongestRun.StartMs}} to {{secs .LongestRun.EndMs}}</td></tr></table>{{else}}<p>No errors.</p>{{end}}
{{if eq .R.Probe.Reference "kill"}}<h2>Recovery</h2><table>{{range .Recovery}}<tr><td>{{.K}}</td><td>{{.V}}</td></tr>{{end}}
{{if .R.Recovery.ActiveClusterChanged}}<tr><td>RayService active cluster</td><td>{{.R.Recovery.ActiveClusterFrom}} → {{.R.Recovery.ActiveClusterTo}}</td></tr>{{end}}</table>{{end}}
<h2>Endpoints</h2><table><tr><th>endpoint</th><th>requests</th><th>ok</th><th>errors</th><th>5xx</th><th>conn</th><th>timeout</th><th>availability</th><th>first error</th><th>last error</th></tr>
{{range .R.Endpoints}}<tr><td>{{.Name}}</td><td>{{.Requests}}</td><td>{{.OK}}</td><td>{{.Errors}}</td><td>{{.Status5xx}}</td><td>{{.ConnectionErrors}}</td><td>{{.Timeouts}}</td><td>{{f3 .Availability}}%</td><td>{{opt .FirstErrorMs}}</td><td>{{opt .LastErrorMs}}</td></tr>
{{end}}</table>
<h2>Latency from scheduled send</h2><table><tr><th>requests</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>
<tr><td>{{.R.Latency.Count}}</td><td>{{f3 .R.Latency.P50Ms}}ms</td><td>{{f3 .R.Latency.P90Ms}}ms</td><td>{{f3 .R.Latency.P99Ms}}ms</td><td>{{f3 .R.Latency.MaxMs}}ms</td></tr></table>
{{if .R.Advice}}<h2>Advice</h2><ul>{{range .R.Advice}}<li><b>{{.Source}} {{.Rule}}</b>: {{.Text}}</li>{{end}}</ul>{{end}}
</body></html>
`))
