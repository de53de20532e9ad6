package pressure

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/golden"
	"github.com/kubectl-ray/kubectl-ray/pkg/schema"
)

// reportStart is when the reports' runs start; reportAt is ms after it.
var reportStart = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)

func reportAt(ms int) time.Time { return reportStart.Add(time.Duration(ms) * time.Millisecond) }

// pressureInput is a disk-pressure run on a head that was evicted and replaced.
func pressureInput() reportInput {
	ev := func(ms int, k timeline.Kind, obj, detail, msg string) timeline.Event {
		return timeline.Event{Kind: k, At: reportAt(ms), Object: obj, Detail: detail, Message: msg}
	}
	c := "kubectl-ray-disk-pressure-abcde"
	tl := timeline.New(
		ev(0, timeline.PressureInjected, c, "", "injected "+c+" into pod demo-head-x7k2p on node node-a"),
		ev(400, timeline.PressureStarted, c, "", c+" started"),
		ev(1200, timeline.NodePressure, "node-a", "DiskPressure", "pressure seen on node node-a: DiskPressure=True"),
		ev(1200, timeline.NodeTainted, "node-a", "node.kubernetes.io/disk-pressure:NoSchedule", "node node-a tainted node.kubernetes.io/disk-pressure:NoSchedule"),
		ev(6100, timeline.PodEvicted, "demo-head-x7k2p", "The node was low on resource: ephemeral-storage.", "pod demo-head-x7k2p evicted: The node was low on resource: ephemeral-storage."),
		ev(6300, timeline.NewHeadCreated, "demo-head-9fz4q", "", "replacement head demo-head-9fz4q created"),
		ev(7900, timeline.NewHeadRunning, "demo-head-9fz4q", "", "replacement head demo-head-9fz4q Running on node node-b"),
	)
	return reportInput{
		Settings: ReportSettings{Experiment: "disk-pressure", Namespace: "ml", Target: "demo", Role: "head", Pod: "demo-head-x7k2p",
			Node: "node-a", Container: c, TargetContainer: "ray-head", Image: "busybox:1.36.1", Fill: "node",
			Percent: 95, Basis: "95% of the free space of the node's container filesystem, measured when the container starts",
			DurationMs: 120000, WatchEviction: true, TimeoutMs: 600000},
		Injected: reportAt(0),
		Timeline: tl,
		Verdict:  Verdict{Passed: true, Outcome: OutcomeCameBack, Message: "the cluster came back: head demo-head-9fz4q Running 2s after the eviction"},
	}
}

func TestBuildPressure(t *testing.T) {
	r := buildReport(pressureInput())
	if r.Kind != ReportKind || r.APIVersion != schema.APIVersion || len(r.Events) != 7 {
		t.Fatalf("kind %q apiVersion %q events %d", r.Kind, r.APIVersion, len(r.Events))
	}
	e := r.Eviction
	if e.EvictedMs == nil || *e.EvictedMs != 6100 || e.Replacement != "demo-head-9fz4q" || e.ReplacementRunningMs == nil || *e.ReplacementRunningMs != 7900 {
		t.Errorf("eviction: %+v", e)
	}
	if len(e.Pods) != 1 || e.Pods[0] != (EvictedPod{Namespace: "ml", Pod: "demo-head-x7k2p", AtMs: 6100, Message: "The node was low on resource: ephemeral-storage."}) || e.EndedMs != nil {
		t.Errorf("evicted pods: %+v, ended %v", e.Pods, e.EndedMs)
	}
	// Every pod the kubelet evicted is listed, bystanders named as such; a target that ended
	// with no mark of an eviction is not among them.
	in := pressureInput()
	in.Timeline = timeline.New(
		timeline.Event{Kind: timeline.BystanderEvicted, At: reportAt(900), Object: "default/web-0", Detail: "low"},
		timeline.Event{Kind: timeline.PodEnded, At: reportAt(1000), Object: "demo-head-x7k2p", Detail: "Succeeded"})
	r = buildReport(in)
	if e := r.Eviction; len(e.Pods) != 1 || e.Pods[0] != (EvictedPod{Namespace: "default", Pod: "web-0", Bystander: true, AtMs: 900, Message: "low"}) ||
		e.EvictedMs != nil || e.EndedMs == nil || *e.EndedMs != 1000 || e.Ended != "Succeeded" {
		t.Errorf("bystander and an unmarked end: %+v", e)
	}
	// A run without the eviction watch has one event and no eviction times.
	in = pressureInput()
	in.Timeline = timeline.New(in.Timeline.Events()[0])
	in.Settings.WatchEviction, in.Verdict = false, Verdict{Passed: true, Outcome: OutcomeNotWatched, Message: "injected"}
	r = buildReport(in)
	if len(r.Events) != 1 || r.Eviction.EvictedMs != nil || r.Eviction.Replacement != "" {
		t.Errorf("not watched: %+v", r)
	}
}

func TestPressureGolden(t *testing.T) {
	pass := buildReport(pressureInput())
	in := pressureInput()
	in.Timeline = timeline.New(in.Timeline.Events()[:5]...)
	in.Verdict = Verdict{Passed: false, Outcome: OutcomeNotReplaced, Message: "the cluster did not come back within 10m0s: evicted head demo-head-x7k2p was not replaced"}
	fail := buildReport(in)
	// A worker evicted with a bystander of its node, seen before it.
	in = pressureInput()
	in.Settings.Role, in.Settings.Pod = "worker", "demo-worker-4mbx9"
	evs := in.Timeline.Events()[:4]
	evs = append(evs,
		timeline.Event{Kind: timeline.BystanderEvicted, At: reportAt(5800), Object: "default/web-0", Detail: "The node was low on resource: ephemeral-storage.",
			Message: "bystander pod default/web-0 on node node-a evicted: The node was low on resource: ephemeral-storage."},
		timeline.Event{Kind: timeline.PodEvicted, At: reportAt(6100), Object: "demo-worker-4mbx9", Detail: "The node was low on resource: ephemeral-storage.",
			Message: "pod demo-worker-4mbx9 evicted: The node was low on resource: ephemeral-storage."})
	in.Timeline = timeline.New(evs...)
	in.Verdict = Verdict{Passed: true, Outcome: OutcomeEvicted, Message: "pod demo-worker-4mbx9 was evicted; bystanders the kubelet evicted on node node-a: default/web-0"}
	bystander := buildReport(in)
	for name, write := range map[string]func(*bytes.Buffer, *Report) error{
		"json":      func(b *bytes.Buffer, r *Report) error { return availability.WriteJSON(b, r) },
		"junit.xml": func(b *bytes.Buffer, r *Report) error { return WriteJUnit(b, r) },
		"html":      func(b *bytes.Buffer, r *Report) error { return WriteHTML(b, r) },
	} {
		for _, c := range []struct {
			name string
			r    *Report
		}{{"pressure-replaced", pass}, {"pressure-not-replaced", fail}, {"pressure-bystander", bystander}} {
			var b bytes.Buffer
			if err := write(&b, c.r); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, "testdata/"+c.name+"."+name, b.Bytes())
		}
	}
}

// The schema in docs/chaos-pressure.md names these top-level fields; a rename breaks saved reports.
func TestPressureJSONFields(t *testing.T) {
	var b bytes.Buffer
	if err := availability.WriteJSON(&b, buildReport(pressureInput())); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"apiVersion", "kind", "settings", "injected", "events", "eviction", "ramp", "verdict"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("no %q in %s", k, b.String())
		}
	}
	if len(doc) != 8 {
		t.Errorf("%d top-level fields, want 8", len(doc))
	}
}

// memory-pressure's ramp is carried as the runner read it; without one it is null, not absent.
func TestPressureRamp(t *testing.T) {
	in := pressureInput()
	in.Ramp = &Ramp{Bytes: 2 << 30, ResidentMs: 1070, SeenMs: 1500}
	var b bytes.Buffer
	if err := availability.WriteJSON(&b, buildReport(in)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"ramp": {
    "bytes": 2147483648,
    "residentMs": 1070,
    "seenMs": 1500
  },`) {
		t.Errorf("no ramp in:\n%s", b.String())
	}
	b.Reset()
	if err := availability.WriteJSON(&b, buildReport(pressureInput())); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"ramp": null,`) {
		t.Errorf("no null ramp in:\n%s", b.String())
	}
}
