package pressure

import (
	"html/template"
	"io"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
)

// WriteHTML writes a pressure run as one self-contained page: the settings, the verdict,
// the pods the kubelet evicted (bystanders named as such) and the timeline.
func WriteHTML(w io.Writer, r *Report) error {
	return pressurePage.Execute(w, r)
}

var pressurePage = template.Must(template.New("pressure").Funcs(template.FuncMap{"secs": availability.Secs, "opt": availability.OptSecs,
	"dur": func(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{{.Settings.Experiment}}: {{.Settings.Namespace}}/{{.Settings.Pod}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}
th{background:#f3f3f3}
.pass{color:#2e7d32;font-weight:bold}.fail{color:#c62828;font-weight:bold}
</style></head><body>
<h1>{{.Settings.Experiment}} on pod {{.Settings.Pod}} in {{.Settings.Namespace}}</h1>
<p>Container {{.Settings.Container}} (image {{.Settings.Image}}) joined {{.Settings.TargetContainer}} on node {{.Settings.Node}}:
{{.Settings.Basis}}{{if .Settings.Fill}}, fill {{.Settings.Fill}}{{end}}, for {{dur .Settings.DurationMs}}.
Injected {{.Injected.UTC.Format "2006-01-02T15:04:05.000Z"}}; times are relative to the injection.</p>
<h2>Verdict: {{if .Verdict.Passed}}<span class="pass">PASS</span>{{else}}<span class="fail">FAIL</span>{{end}} ({{.Verdict.Outcome}})</h2>
<p>{{.Verdict.Message}}</p>
<h2>Eviction</h2><table><tr><td>evicted</td><td>{{opt .Eviction.EvictedMs}}</td></tr>
<tr><td>replacement</td><td>{{or .Eviction.Replacement "-"}}</td></tr>
<tr><td>replacement Running</td><td>{{opt .Eviction.ReplacementRunningMs}}</td></tr>
{{if .Eviction.Ended}}<tr><td>ended with no mark of an eviction</td><td>{{opt .Eviction.EndedMs}} ({{.Eviction.Ended}})</td></tr>
{{end}}</table>
<h2>Pods the kubelet evicted on node {{.Settings.Node}}</h2>{{if .Eviction.Pods}}<table><tr><th>at</th><th>pod</th><th>role</th><th>the kubelet's message</th></tr>
{{range .Eviction.Pods}}<tr><td>{{secs .AtMs}}</td><td>{{.Namespace}}/{{.Pod}}</td><td>{{if .Bystander}}bystander{{else}}target{{end}}</td><td>{{.Message}}</td></tr>
{{end}}</table>{{else}}<p>none seen{{if not .Settings.WatchEviction}} (not watched){{end}}</p>{{end}}
<h2>Events</h2><table><tr><th>at</th><th>event</th><th>object</th><th>detail</th><th>what happened</th></tr>
{{range .Events}}<tr><td>{{secs .AtMs}}</td><td>{{.Kind}}</td><td>{{.Object}}</td><td>{{.Detail}}</td><td>{{.Message}}</td></tr>
{{end}}</table>
</body></html>
`))
