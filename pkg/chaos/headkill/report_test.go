package headkill

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/golden"
)

var start = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }

// headKillInput is a 10 s run at 10/s with a kill at 3 s: the killed head's proxy answers 502 for
// its share of requests, then refuses; one worker request gets a 503 and one times out.
func headKillInput() Input {
	res := &probe.Result{Start: start, Rate: 10, Duration: 10 * time.Second, Elapsed: 10*time.Second + 2*time.Millisecond,
		Endpoints: []string{"demo-head-a", "demo-worker-1", "demo-head-b"}}
	for i := range 100 {
		sched := time.Duration(i) * 100 * time.Millisecond
		rec := probe.Record{Scheduled: sched, Sent: sched + 50*time.Microsecond, Latency: 2 * time.Millisecond, Class: probe.ClassHTTP, Status: 200}
		switch {
		case i < 50:
			rec.Endpoint = uint16(i % 2)
		case i < 80:
			rec.Endpoint = 1
		case i%2 == 0:
			rec.Endpoint = 2
		default:
			rec.Endpoint = 1
		}
		switch {
		case i >= 30 && i < 45 && rec.Endpoint == 0:
			rec.Status = 502
		case i >= 45 && i < 50 && rec.Endpoint == 0:
			rec.Class, rec.Status = probe.ClassRefused, 0
		case i == 31:
			rec.Status = 503
		case i == 33:
			rec.Class, rec.Status, rec.Latency = probe.ClassTimeout, 0, 2*time.Second
		}
		res.Records = append(res.Records, rec)
	}
	tl := timeline.New(
		timeline.Event{Kind: timeline.EndpointAdded, At: at(0), Object: "demo-head-a"},
		timeline.Event{Kind: timeline.EndpointAdded, At: at(0), Object: "demo-worker-1"},
		timeline.Event{Kind: timeline.KillRequested, At: at(3000), Object: "demo-head-a", Detail: "delete"},
		timeline.Event{Kind: timeline.EndpointRemoved, At: at(5000), Object: "demo-head-a"},
		timeline.Event{Kind: timeline.OldHeadGone, At: at(5200), Object: "demo-head-a"},
		timeline.Event{Kind: timeline.NewHeadCreated, At: at(5300), Object: "demo-head-b"},
		timeline.Event{Kind: timeline.NewHeadScheduled, At: at(5400), Object: "demo-head-b"},
		timeline.Event{Kind: timeline.RayClusterState, At: at(5500), From: "ready", To: ""},
		timeline.Event{Kind: timeline.NewHeadRunning, At: at(7000), Object: "demo-head-b"},
		timeline.Event{Kind: timeline.NewHeadReady, At: at(8000), Object: "demo-head-b"},
		timeline.Event{Kind: timeline.EndpointAdded, At: at(8000), Object: "demo-head-b"},
		timeline.Event{Kind: timeline.RayClusterState, At: at(8500), From: "", To: "ready"},
		timeline.Event{Kind: timeline.RayServiceActiveCluster, At: at(8600), From: "demo-raycluster-abc", To: "demo-raycluster-xyz"},
	)
	maxErr, minAvail := int64(5), 80.0
	return Input{
		Settings: ReportSettings{Cluster: "rayservice/demo", Namespace: "serve", Mode: "delete", Target: "service/demo-serve-svc:8000",
			Method: "POST", Path: "/dummy", Rate: 10, WarmupMs: 3000, AfterMs: 7000, RequestTimeout: 2000},
		Probe: res, Timeline: tl,
		SLO: availability.SLO{MaxErrors: &maxErr, MinAvailability: &minAvail},
		Advice: []availability.Advice{{Source: "doctor", Rule: "serve-head-in-service",
			Text: "The head pod is behind demo-serve-svc; set spec.excludeHeadPodFromServeSvc: true."}},
	}
}

func TestBuildHeadKill(t *testing.T) {
	r := Build(headKillInput())
	tt := r.Totals
	if tt.Requests != 100 || tt.Status2xx != 88 || tt.Status502 != 8 || tt.Status503 != 1 || tt.Timeouts != 1 ||
		tt.ConnectionErrors != 2 || tt.Errors != 12 || tt.Availability != 88 {
		t.Fatalf("totals %+v", tt)
	}
	if tt.ByStatus["502"] != 8 || tt.ByStatus["200"] != 88 || tt.ByClass["refused"] != 2 || tt.ByClass["timeout"] != 1 {
		t.Fatalf("byStatus %v byClass %v", tt.ByStatus, tt.ByClass)
	}
	w := r.ErrorWindow
	if w == nil || w.FirstMs != 0 || w.LastMs != 1800 || w.LongestRun != (availability.Run{Requests: 5, StartMs: 0, EndMs: 400}) {
		t.Fatalf("error window %+v", w)
	}
	rc := r.Recovery
	if *rc.OldHeadGoneMs != 2200 || *rc.NewHeadReadyMs != 5000 || *rc.RayClusterReadyMs != 5500 || *rc.EndpointsBackMs != 5000 ||
		!rc.ActiveClusterChanged || rc.NewHead != "demo-head-b" {
		t.Fatalf("recovery %+v", rc)
	}
	head := r.Endpoints[0]
	if head.Name != "demo-head-a" || head.Errors != 10 || head.Status5xx != 8 || head.ConnectionErrors != 2 {
		t.Fatalf("head row %+v", head)
	}
	if r.Verdict.Passed || r.Verdict.Checks[0].Passed || !r.Verdict.Checks[1].Passed {
		t.Fatalf("verdict %+v", r.Verdict)
	}
	if len(r.Seconds) != 10 || r.Seconds[3].S5xx != 6 || r.Seconds[3].Timeout != 1 || r.Seconds[4].Conn != 2 {
		t.Fatalf("seconds %+v", r.Seconds)
	}
	var rules []string
	for _, a := range r.Advice {
		rules = append(rules, a.Rule)
	}
	want := "errors-from-head active-cluster-switched timeouts connection-errors serve-head-in-service"
	if got := strings.Join(rules, " "); got != want {
		t.Fatalf("advice rules %q, want %q", got, want)
	}
}

func TestBuildCleanAndInterrupted(t *testing.T) {
	res := &probe.Result{Start: start, Rate: 4, Duration: 2 * time.Second, Endpoints: []string{"http://127.0.0.1:8000"}}
	for i := range 8 {
		s := time.Duration(i) * 250 * time.Millisecond
		res.Records = append(res.Records, probe.Record{Scheduled: s, Sent: s, Latency: time.Millisecond, Status: 200})
	}
	r := Build(Input{Probe: res, Timeline: timeline.New()})
	// No kill (interrupted in the warm-up, or refused): nothing to say about what a kill did.
	if r.ErrorWindow != nil || r.Totals.Availability != 100 || !r.Verdict.Passed || r.Probe.Reference != "probeStart" ||
		len(r.Advice) != 0 {
		t.Fatalf("clean report without a kill %+v", r)
	}
	r = Build(Input{Probe: res, Timeline: timeline.New(timeline.Event{Kind: timeline.KillRequested, At: at(500), Object: "h"})})
	if r.Probe.Reference != "kill" || len(r.Advice) != 1 || r.Advice[0].Rule != AdviceNoErrors {
		t.Fatalf("clean report %+v", r)
	}

	res.Interrupted = true
	res.Records[7].Class, res.Records[7].Status = probe.ClassCanceled, 0
	zero := int64(0)
	r = Build(Input{Probe: res, SLO: availability.SLO{MaxErrors: &zero}})
	if r.Totals.Requests != 7 || r.Totals.Aborted != 1 || r.Totals.Errors != 0 || !r.Verdict.Passed || r.Advice[0].Rule != AdvicePartial {
		t.Fatalf("interrupted report totals %+v verdict %+v advice %+v", r.Totals, r.Verdict, r.Advice)
	}

	minAvail := 99.9
	r = Build(Input{Probe: &probe.Result{Start: start}, SLO: availability.SLO{MinAvailability: &minAvail}})
	if r.Verdict.Passed {
		t.Fatal("an empty run passed a min-availability SLO")
	}
}

func TestGolden(t *testing.T) {
	clean := headKillInput()
	for i := range clean.Probe.Records {
		clean.Probe.Records[i].Class, clean.Probe.Records[i].Status, clean.Probe.Records[i].Latency = probe.ClassHTTP, 200, 2*time.Millisecond
	}
	clean.Timeline = timeline.New(timeline.Event{Kind: timeline.KillRequested, At: at(3000), Object: "demo-head-a", Detail: "force"})
	clean.Advice = nil
	for name, in := range map[string]Input{"headkill": headKillInput(), "clean": clean, "url-one-error": urlOneErrorInput(),
		"warmup-failed": warmupFailedInput()} {
		r := Build(in)
		outputs := map[string]func(*bytes.Buffer) error{
			".txt":       func(b *bytes.Buffer) error { return WriteText(b, r, false) },
			".color.txt": func(b *bytes.Buffer) error { return WriteText(b, r, true) },
			".json":      func(b *bytes.Buffer) error { return availability.WriteJSON(b, r) },
			".junit.xml": func(b *bytes.Buffer) error { return WriteJUnit(b, r) },
			".html":      func(b *bytes.Buffer) error { return WriteHTML(b, r) },
		}
		for ext, write := range outputs {
			var b bytes.Buffer
			if err := write(&b); err != nil {
				t.Fatalf("%s%s: %v", name, ext, err)
			}
			golden.Assert(t, filepath.Join("testdata", name+ext), b.Bytes())
		}
	}
}

func TestJSONSchemaFields(t *testing.T) {
	var b bytes.Buffer
	if err := availability.WriteJSON(&b, Build(headKillInput())); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Totals     struct {
			Requests int            `json:"requests"`
			ByStatus map[string]int `json:"byStatus"`
		} `json:"totals"`
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.APIVersion != "kubectl-ray.io/v1alpha1" || doc.Kind != "HeadKillReport" || doc.Totals.Requests != 100 ||
		doc.Totals.ByStatus["502"] != 8 || doc.Events[2]["kind"] != "KillRequested" || doc.Events[2]["atMs"] != 0.0 {
		t.Fatalf("json document %+v", doc)
	}
}

func TestHTMLIsSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, Build(headKillInput())); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script", "src=", "href=", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: it must not load anything", bad)
		}
	}
	if !strings.Contains(page, "<svg") || strings.Count(page, "stroke-dasharray") != 13 {
		t.Errorf("expected an inline SVG with 13 event marks")
	}
}

// TestRayClusterStayedReady: KubeRay v1.1.1 keeps .status.state "ready" through a head restart;
// the report says so instead of "not seen".
func TestRayClusterStayedReady(t *testing.T) {
	in := headKillInput()
	var kept []timeline.Event
	for _, e := range in.Timeline.Events() {
		if e.Kind != timeline.RayClusterState {
			kept = append(kept, e)
		}
	}
	kept = append(kept, timeline.Event{Kind: timeline.RayClusterState, At: at(0), Object: "demo", To: "ready", Detail: "at start"})
	in.Timeline = timeline.New(kept...)
	r := Build(in)
	if !r.Recovery.RayClusterStayedReady || r.Recovery.RayClusterReadyMs != nil {
		t.Fatalf("recovery %+v", r.Recovery)
	}
	var b bytes.Buffer
	if err := WriteText(&b, r, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "  RayCluster ready    stayed ready\n") {
		t.Fatalf("text lacks the stayed-ready line:\n%s", b.String())
	}
	if Build(headKillInput()).Recovery.RayClusterStayedReady {
		t.Fatal("a cluster that left ready after the kill did not stay ready")
	}
}

// TestErrorsAfterGoneOnlyFromTheOldHead: with a Service target, errors from other pods after the
// old head was gone are not "something still routed to it".
func TestErrorsAfterGoneOnlyFromTheOldHead(t *testing.T) {
	in := headKillInput()
	// Move the old head's errors to after it was gone (+2.2s from the kill, 5.2s into the probe).
	for i := range in.Probe.Records {
		if in.Probe.Records[i].Endpoint == 0 && !in.Probe.Records[i].OK() {
			in.Probe.Records[i].Scheduled += 2500 * time.Millisecond
		}
	}
	rules := func(r *Report) string {
		var s []string
		for _, a := range r.Advice {
			s = append(s, a.Rule)
		}
		return strings.Join(s, " ")
	}
	if got := rules(Build(in)); !strings.Contains(got, AdviceErrorsAfterGone) {
		t.Fatalf("old head's own errors after it was gone: advice %q", got)
	}
	in = headKillInput()
	in.Probe.Records[99].Endpoint, in.Probe.Records[99].Status = 1, 502 // a worker's 502 at +6.9s
	if got := rules(Build(in)); strings.Contains(got, AdviceErrorsAfterGone) {
		t.Fatalf("a worker's late 502 blamed on routing to the old head: %q", got)
	}
	in.Settings.Target = "http://serve.example:8000" // no attribution: any late error counts
	if got := rules(Build(in)); !strings.Contains(got, AdviceErrorsAfterGone) {
		t.Fatalf("URL target: advice %q", got)
	}
}

// urlOneErrorInput is a --target URL run with one timeout after the kill: every count of one is
// singular, and "endpoints back" does not apply to a URL.
func urlOneErrorInput() Input {
	res := &probe.Result{Start: start, Rate: 10, Duration: 4 * time.Second, Elapsed: 4 * time.Second, Endpoints: []string{"127.0.0.1:8000"}}
	for i := range 40 {
		sched := time.Duration(i) * 100 * time.Millisecond
		rec := probe.Record{Scheduled: sched, Sent: sched, Latency: 2 * time.Millisecond, Class: probe.ClassHTTP, Status: 200}
		if i == 25 {
			rec.Class, rec.Status, rec.Latency = probe.ClassTimeout, 0, time.Second
		}
		res.Records = append(res.Records, rec)
	}
	tl := timeline.New(
		timeline.Event{Kind: timeline.KillRequested, At: at(2000), Object: "demo-head-a", Detail: "delete"},
		timeline.Event{Kind: timeline.OldHeadGone, At: at(2100), Object: "demo-head-a"},
		timeline.Event{Kind: timeline.NewHeadCreated, At: at(2200), Object: "demo-head-b"},
		timeline.Event{Kind: timeline.NewHeadReady, At: at(3000), Object: "demo-head-b"},
	)
	maxErr := int64(5)
	return Input{
		Settings: ReportSettings{Cluster: "demo", Namespace: "ml", Mode: "delete", Target: "http://127.0.0.1:8000", Method: "GET", Path: "/",
			Rate: 10, WarmupMs: 2000, AfterMs: 2000, RequestTimeout: 1000},
		Probe: res, Timeline: tl, SLO: availability.SLO{MaxErrors: &maxErr},
	}
}

// warmupFailedInput is a warm-up against a closed port: six refused requests, the probe stopped,
// nothing killed.
func warmupFailedInput() Input {
	res := &probe.Result{Start: start, Rate: 5, Duration: 70 * time.Second, Elapsed: 1002 * time.Millisecond, Stopped: true,
		Endpoints: []string{"127.0.0.1:1"}}
	for i := range 6 {
		sched := time.Duration(i) * 200 * time.Millisecond
		res.Records = append(res.Records, probe.Record{Scheduled: sched, Sent: sched, Latency: time.Millisecond, Class: probe.ClassRefused})
	}
	maxErr := int64(10)
	return Input{
		Settings: ReportSettings{Cluster: "demo", Namespace: "ml", Mode: "delete", Target: "http://127.0.0.1:1", Method: "GET", Path: "/",
			Rate: 5, WarmupMs: 1000, AfterMs: 60000, RequestTimeout: 2000},
		Probe: res, Timeline: timeline.New(timeline.Event{Kind: timeline.RayClusterState, At: at(-50), To: "ready", Detail: "first seen"}),
		SLO: availability.SLO{MaxErrors: &maxErr}, WarmupFailed: true,
		Advice: []availability.Advice{{Source: "doctor", Rule: "gcs-ft-off", Text: "GCS fault tolerance is off."}},
	}
}

// TestWarmupFailedSaysNothingWasKilled: a failed warm-up fails the verdict whatever the SLO, and
// the report blames no kill.
func TestWarmupFailedSaysNothingWasKilled(t *testing.T) {
	r := Build(warmupFailedInput())
	if !r.Probe.WarmupFailed || r.Verdict.Passed || len(r.Verdict.Checks) != 2 || r.Verdict.Checks[0].Name != "warm-up" || !r.Verdict.Checks[1].Passed {
		t.Fatalf("verdict %+v", r.Verdict)
	}
	var rules []string
	for _, a := range r.Advice {
		rules = append(rules, a.Rule)
	}
	if got := strings.Join(rules, " "); got != "warmup-failed gcs-ft-off" {
		t.Fatalf("advice %q, want the warm-up's and doctor's only", got)
	}
}
