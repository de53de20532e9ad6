package drain

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
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
	APIVersion string                 `json:"apiVersion"`
	Kind       string                 `json:"kind"`
	Settings   ReportSettings         `json:"settings"`
	Probe      availability.ProbeInfo `json:"probe"`

	availability.Availability `json:"-"`
	Drain                     Section `json:"-"`
}

// MarshalJSON writes the drain's section after the error window, where the schema has it.
func (r Report) MarshalJSON() ([]byte, error) {
	type head Report
	return availability.JSON(head(r), &r.Availability, "drain", r.Drain)
}

// Section is what the drain did: the node, each pod it evicted, and the Ray pods KubeRay made.
type Section struct {
	Node            string `json:"node"`
	AlreadyCordoned bool   `json:"alreadyCordoned"`
	Uncordoned      bool   `json:"uncordoned"`
	// Skipped is kubectl's drain library's warning about the pods it left (DaemonSet pods...).
	Skipped string `json:"skipped,omitempty"`
	availability.Losses
}

// buildReport is the report of a run; it is pure.
func buildReport(in availability.Input, rs ReportSettings, t *target, uncordoned bool, ray map[string]bool) *Report {
	in.Reference = timeline.NodeCordoned
	m := availability.Build(in)
	r := &Report{APIVersion: schema.APIVersion, Kind: ReportKind, Settings: rs, Probe: m.Probe, Availability: m.Availability}
	r.Drain = section(r.Events, t, uncordoned, ray)
	return r
}

// section is the drain's own section, from the timeline's events.
func section(events []availability.Event, t *target, uncordoned bool, ray map[string]bool) Section {
	var pods []string
	for _, p := range t.pods {
		pods = append(pods, p.Namespace+"/"+p.Name)
	}
	return Section{Node: t.node, AlreadyCordoned: t.alreadyCordoned, Uncordoned: uncordoned, Skipped: t.skipped,
		Losses: availability.BuildLosses(events, pods, ray)}
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
	b.WriteString(availability.RanLines(r.Probe.Start, r.Probe.KillAtMs, r.Probe.ProbeRun, "the cordon", "the node was not cordoned"))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return availability.WriteText(w, &r.Availability, color, func(w io.Writer) error { return writeSection(w, r.Drain) })
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
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return availability.WriteLosses(w, d.Losses, "the cordon")
}
