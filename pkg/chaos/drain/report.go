package drain

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/report"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/schema"
)

// ReportKind identifies a drain's JSON report; docs/chaos-drain.md documents the schema.
const ReportKind = "DrainReport"

// ReportSettings echo what was asked, so a saved report says what it measured.
type ReportSettings struct {
	Node           string  `json:"node"`
	NodeOf         string  `json:"nodeOf,omitempty"` // "rayservice/demo's worker", "a Ray pod of raycluster/demo"
	Namespace      string  `json:"namespace"`
	How            string  `json:"how"` // evict or delete
	GracePeriod    *int64  `json:"gracePeriodSeconds"`
	Target         string  `json:"target"`
	Method         string  `json:"method"`
	Path           string  `json:"path"`
	Rate           float64 `json:"rate"`
	WarmupMs       int64   `json:"warmupMs"`
	AfterMs        int64   `json:"afterMs,omitempty"`
	UntilRecovered bool    `json:"untilRecovered,omitempty"`
	TimeoutMs      int64   `json:"timeoutMs"`
	RequestTimeout int64   `json:"requestTimeoutMs"`
	KeepCordoned   bool    `json:"keepCordoned,omitempty"`
}

// Report is one drain: head-kill's availability model (totals, error window, endpoints,
// latency, per-second bars, events, verdict) around the cordon, and what the drain did. Times
// named ...Ms are relative to the cordon (to the probe start if there was none).
type Report struct {
	APIVersion  string            `json:"apiVersion"`
	Kind        string            `json:"kind"`
	Settings    ReportSettings    `json:"settings"`
	Probe       report.ProbeInfo  `json:"probe"`
	Totals      report.Totals     `json:"totals"`
	ErrorWindow *report.Window    `json:"errorWindow"`
	Drain       Section           `json:"drain"`
	Endpoints   []report.Endpoint `json:"endpoints"`
	Latency     report.Latency    `json:"latency"`
	Seconds     []report.Second   `json:"seconds"`
	Events      []report.Event    `json:"events"`
	Verdict     report.Verdict    `json:"verdict"`
	Advice      []report.Advice   `json:"advice"`

	base *report.Report
}

// Section is what the drain did: the node, each pod it evicted, and the Ray pods KubeRay made.
type Section struct {
	Node            string `json:"node"`
	AlreadyCordoned bool   `json:"alreadyCordoned"`
	Uncordoned      bool   `json:"uncordoned"`
	// Skipped is kubectl's drain library's warning about the pods it left (DaemonSet pods...).
	Skipped      string        `json:"skipped,omitempty"`
	Pods         []EvictedPod  `json:"pods"`
	Replacements []Replacement `json:"replacements"`
}

// EvictedPod is one pod of the node and what its eviction met.
type EvictedPod struct {
	Pod         string   `json:"pod"` // NAMESPACE/NAME
	Ray         bool     `json:"ray"`
	RequestedMs *float64 `json:"requestedMs"` // the first request
	AcceptedMs  *float64 `json:"acceptedMs"`
	GoneMs      *float64 `json:"goneMs"`
	Refusals    int      `json:"refusals"`
	// RefusedBy is the last refusal's words (the budget first).
	RefusedBy string `json:"refusedBy,omitempty"`
	// Outcome: gone, accepted (not yet gone when the run ended), refused (still, at the end),
	// failed (an error), or not requested.
	Outcome string `json:"outcome"`
	Detail  string `json:"detail,omitempty"`
}

// Replacement is a Ray pod created after the cordon, where it went and when it was Ready.
type Replacement struct {
	Pod         string   `json:"pod"`
	What        string   `json:"what"` // "worker of group demo/small"
	Node        string   `json:"node,omitempty"`
	CreatedMs   float64  `json:"createdMs"`
	ScheduledMs *float64 `json:"scheduledMs"`
	ReadyMs     *float64 `json:"readyMs"`
}

// buildReport is the report of a run; it is pure.
func buildReport(in report.Input, rs ReportSettings, t *target, uncordoned bool, ray map[string]bool) *Report {
	in.Reference = timeline.NodeCordoned
	base := report.Build(in)
	r := &Report{APIVersion: schema.APIVersion, Kind: ReportKind, Settings: rs, Probe: base.Probe, Totals: base.Totals,
		ErrorWindow: base.ErrorWindow, Endpoints: base.Endpoints, Latency: base.Latency, Seconds: base.Seconds,
		Events: base.Events, Verdict: base.Verdict, Advice: base.Advice, base: base}
	r.Drain = section(base.Events, t, uncordoned, ray)
	return r
}

// section reads the drain's events into one row per evicted pod and one per new Ray pod.
func section(events []report.Event, t *target, uncordoned bool, ray map[string]bool) Section {
	s := Section{Node: t.node, AlreadyCordoned: t.alreadyCordoned, Uncordoned: uncordoned, Skipped: t.skipped,
		Pods: []EvictedPod{}, Replacements: []Replacement{}}
	rows := map[string]*EvictedPod{}
	for _, p := range t.pods {
		name := p.Namespace + "/" + p.Name
		s.Pods = append(s.Pods, EvictedPod{Pod: name, Ray: ray[name], Outcome: "not requested"})
	}
	for i := range s.Pods {
		rows[s.Pods[i].Pod] = &s.Pods[i]
	}
	fresh := map[string]*Replacement{}
	var order []string
	at := func(e report.Event) *float64 { v := e.AtMs; return &v }
	for _, e := range events {
		row := rows[e.Object]
		switch e.Kind {
		case timeline.EvictionRequested:
			if row != nil && row.RequestedMs == nil {
				row.RequestedMs, row.Outcome = at(e), "requested"
			}
		case timeline.EvictionAccepted:
			if row != nil && row.AcceptedMs == nil {
				row.AcceptedMs, row.Outcome = at(e), "accepted"
			}
		case timeline.EvictionRefused:
			if row != nil {
				row.Refusals++
				row.RefusedBy, row.Outcome = e.Detail, "refused"
			}
		case timeline.EvictionFailed:
			if row != nil && row.GoneMs == nil && row.AcceptedMs == nil {
				row.Detail = e.Detail
				if row.Outcome != "refused" {
					row.Outcome = "failed"
				}
			}
		case timeline.DrainedPodGone:
			if row != nil && row.GoneMs == nil {
				row.GoneMs, row.Outcome = at(e), "gone"
			}
		case timeline.RayPodCreated:
			fresh[e.Object] = &Replacement{Pod: e.Object, What: e.Detail, CreatedMs: e.AtMs}
			order = append(order, e.Object)
		case timeline.RayPodScheduled:
			if f := fresh[e.Object]; f != nil && f.ScheduledMs == nil {
				f.ScheduledMs, f.Node = at(e), e.Detail
			}
		case timeline.RayPodReady:
			if f := fresh[e.Object]; f != nil && f.ReadyMs == nil {
				f.ReadyMs = at(e)
			}
		}
	}
	for _, name := range order {
		s.Replacements = append(s.Replacements, *fresh[name])
	}
	sort.SliceStable(s.Replacements, func(i, j int) bool { return s.Replacements[i].CreatedMs < s.Replacements[j].CreatedMs })
	return s
}

// WriteText renders the report for a person; color adds ANSI colors to the bars and verdict.
func WriteText(w io.Writer, r *Report, color bool) error {
	s := r.Settings
	var b strings.Builder
	what := "node " + s.Node
	if s.NodeOf != "" {
		what += ", which runs " + s.NodeOf
	}
	if r.Probe.WarmupFailed {
		fmt.Fprintf(&b, "Nothing was drained: the warm-up failed, so %s was not cordoned.\n", what)
		fmt.Fprintf(&b, "  probe     %s %s%s at %v/s, warm-up %dms\n", s.Method, s.Target, s.Path, s.Rate, s.WarmupMs)
		fmt.Fprintf(&b, "  requests  %d ok, %d failed\n", r.Totals.Status2xx+r.Totals.Status3xx, r.Totals.Errors)
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "Drain of %s (%s", what, s.How)
	if s.GracePeriod != nil {
		fmt.Fprintf(&b, ", grace period %ds", *s.GracePeriod)
	}
	fmt.Fprintf(&b, ")\nProbe: %s %s%s at %v/s, request timeout %dms, warm-up %dms", s.Method, s.Target, s.Path, s.Rate, s.RequestTimeout, s.WarmupMs)
	if s.UntilRecovered {
		fmt.Fprintf(&b, ", until recovered (at most %dms)\n", s.TimeoutMs)
	} else {
		fmt.Fprintf(&b, ", %dms after the cordon\n", s.AfterMs)
	}
	ref := "the probe start (the node was not cordoned)"
	if r.Probe.KillAtMs != nil {
		ref = fmt.Sprintf("the cordon, %s after the probe started", report.Secs(*r.Probe.KillAtMs))
	}
	fmt.Fprintf(&b, "Ran %s from %s; times below are relative to %s.\n", report.Secs(r.Probe.ElapsedMs), r.Probe.Start.UTC().Format("2006-01-02T15:04:05.000Z"), ref)
	if r.Probe.Interrupted {
		fmt.Fprintf(&b, "Interrupted: %d of %s were scheduled.\n", r.Probe.Scheduled, report.Plural(r.Probe.Planned, "planned request", "planned requests"))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return report.WriteAvailability(w, r.base, color, func(w io.Writer) error { return writeSection(w, r.Drain) })
}

// writeSection is the drain's own part of the text: the node, each pod, each new Ray pod.
func writeSection(w io.Writer, d Section) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\nDrain of node %s (from the cordon)\n", d.Node)
	switch {
	case d.AlreadyCordoned:
		fmt.Fprintf(&b, "  the node was cordoned before the run, and stays cordoned\n")
	case d.Uncordoned:
		fmt.Fprintf(&b, "  uncordoned when the run ended\n")
	default:
		fmt.Fprintf(&b, "  left cordoned (--keep-cordoned): kubectl uncordon %s\n", d.Node)
	}
	if d.Skipped != "" {
		fmt.Fprintf(&b, "  %s\n", d.Skipped)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  POD\tRAY\tREQUESTED\tACCEPTED\tGONE\tREFUSALS\tOUTCOME\n")
	for _, p := range d.Pods {
		ray := "-"
		if p.Ray {
			ray = "yes"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%d\t%s\n", p.Pod, ray, report.OptSecs(p.RequestedMs), report.OptSecs(p.AcceptedMs), report.OptSecs(p.GoneMs), p.Refusals, p.Outcome)
	}
	_ = tw.Flush()
	for _, p := range d.Pods {
		if p.RefusedBy != "" {
			fmt.Fprintf(&b, "  %s refused %s: %s\n", p.Pod, report.Plural(p.Refusals, "time", "times"), p.RefusedBy)
		}
		if p.Detail != "" {
			fmt.Fprintf(&b, "  %s: %s\n", p.Pod, p.Detail)
		}
	}
	fmt.Fprintf(&b, "\nRay pods KubeRay created after the cordon\n")
	if len(d.Replacements) == 0 {
		fmt.Fprintf(&b, "  none seen\n")
	}
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, p := range d.Replacements {
		fmt.Fprintf(tw, "  %s\t%s\tcreated %s\ton %s\tscheduled %s\tReady %s\n", p.Pod, p.What, report.Secs(p.CreatedMs), orDash(p.Node),
			report.OptSecs(p.ScheduledMs), report.OptSecs(p.ReadyMs))
	}
	_ = tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
