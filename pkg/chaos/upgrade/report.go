package upgrade

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/schema"
)

// ReportKind identifies a chaos upgrade's JSON report; docs/chaos-upgrade.md documents the schema.
const ReportKind = "UpgradeReport"

// ReportSettings echo what was asked, so a saved report says what it measured.
type ReportSettings struct {
	RayService     string  `json:"rayService"`
	Namespace      string  `json:"namespace"`
	Image          string  `json:"image,omitempty"` // --image
	Patch          string  `json:"patch"`           // the JSON merge patch applied
	Target         string  `json:"target"`          // "service/NAME:PORT"
	Method         string  `json:"method"`
	Path           string  `json:"path"`
	Rate           float64 `json:"rate"`
	WarmupMs       int64   `json:"warmupMs"`
	TimeoutMs      int64   `json:"timeoutMs"`
	RequestTimeout int64   `json:"requestTimeoutMs"`
}

// Steps are KubeRay's steps of the upgrade, in milliseconds after the patch; null when
// not seen.
type Steps struct {
	// Strategy is the RayService's upgrade strategy: NewCluster, or NewClusterWithIncrementalUpgrade
	// (then Gateway names the Gateway the probe went through, and the traffic steps are set).
	Strategy                string   `json:"strategy"`
	Gateway                 string   `json:"gateway,omitempty"`
	OldCluster              string   `json:"oldCluster"`
	NewCluster              string   `json:"newCluster,omitempty"`
	PendingClusterCreatedMs *float64 `json:"pendingClusterCreatedMs"`
	NewHeadReadyMs          *float64 `json:"newHeadReadyMs"`
	ServeAppsReadyMs        *float64 `json:"serveAppsReadyMs"`
	// FirstTrafficMs and AllTrafficMs: the new cluster's first share of the HTTPRoute's traffic,
	// and all of it (an incremental upgrade only).
	FirstTrafficMs      *float64 `json:"firstTrafficMs,omitempty"`
	AllTrafficMs        *float64 `json:"allTrafficMs,omitempty"`
	ActiveSwitchedMs    *float64 `json:"activeSwitchedMs"`
	OldClusterDeletedMs *float64 `json:"oldClusterDeletedMs"`
	// Switched: the RayService's active cluster changed to another one.
	Switched bool `json:"switched"`
	// LastSeen is the RayService's upgrade as last seen, in words.
	LastSeen string `json:"lastSeen"`
}

// Probe says how the probe itself went; PatchAtMs is the patch after the probe start.
type Probe struct {
	Start     time.Time `json:"start"`
	PatchAtMs *float64  `json:"patchAtMs"`
	availability.ProbeRun
}

// Report is one chaos upgrade: head-kill's availability model (totals, error window,
// per-endpoint table, latency, per-second bars, SLO verdict) around the patch, and the upgrade's
// steps. Times named ...Ms are relative to the patch (to the probe start if none was applied).
type Report struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Settings   ReportSettings `json:"settings"`
	Probe      Probe          `json:"probe"`

	// The upgrade's report has no advice section: Advice stays nil.
	availability.Availability `json:"-"`
	Upgrade                   Steps `json:"-"`
}

// MarshalJSON writes the upgrade's steps after the error window, where the schema has it.
func (r Report) MarshalJSON() ([]byte, error) {
	type head Report
	return availability.JSON(head(r), &r.Availability, "upgrade", r.Upgrade)
}

// reportInput is everything buildReport needs besides head-kill's availability.Input (its Settings are
// left empty; Reference is set here).
type reportInput struct {
	availability.Input
	Settings   ReportSettings
	OldCluster string
	LastSeen   string
	Strategy   string
	Gateway    string // incremental only
}

// CheckSwitch is the verdict's check that the upgrade happened: the active cluster switched.
const CheckSwitch = "switch"

// buildReport computes the report; it is pure.
func buildReport(in reportInput) *Report {
	in.Input.Reference = timeline.UpgradePatched
	m := availability.Build(in.Input)
	r := &Report{APIVersion: schema.APIVersion, Kind: ReportKind, Settings: in.Settings,
		Probe:        Probe{Start: m.Probe.Start, PatchAtMs: m.Probe.KillAtMs, ProbeRun: m.Probe.ProbeRun},
		Availability: m.Availability}
	for i, c := range r.Verdict.Checks {
		if c.Name == "warm-up" {
			r.Verdict.Checks[i].Message = strings.Replace(c.Message, "nothing was killed", "nothing was patched", 1)
		}
	}
	r.Upgrade = steps(r.Events, in.OldCluster, in.LastSeen)
	r.Upgrade.Strategy, r.Upgrade.Gateway = in.Strategy, in.Gateway
	if r.Probe.PatchAtMs != nil {
		c := availability.Check{Name: CheckSwitch, Passed: r.Upgrade.Switched}
		if c.Passed {
			c.Message = fmt.Sprintf("traffic switched from %s to %s", in.OldCluster, r.Upgrade.NewCluster)
		} else {
			c.Message = "the active cluster never switched: " + in.LastSeen
		}
		r.Verdict.Checks = append([]availability.Check{c}, r.Verdict.Checks...)
		r.Verdict.Passed = r.Verdict.Passed && c.Passed
	}
	return r
}

func steps(events []availability.Event, old, lastSeen string) Steps {
	u := Steps{OldCluster: old, LastSeen: lastSeen}
	patched := false
	first := func(dst **float64, e availability.Event) {
		if *dst == nil {
			*dst = ptr.To(e.AtMs)
		}
	}
	for _, e := range events {
		if e.Kind == timeline.UpgradePatched {
			patched = true
		}
		if !patched {
			continue
		}
		switch e.Kind {
		case timeline.RayServicePendingCluster:
			if e.To != "" && e.To != old {
				first(&u.PendingClusterCreatedMs, e)
				if u.NewCluster == "" {
					u.NewCluster = e.To
				}
			}
		case timeline.PendingHeadReady:
			first(&u.NewHeadReadyMs, e)
		case timeline.ServeAppsReady:
			if e.Object != old {
				first(&u.ServeAppsReadyMs, e)
			}
		case timeline.RayServiceActiveCluster:
			if e.To != "" && e.To != old && !u.Switched {
				u.Switched, u.NewCluster = true, e.To
				first(&u.ActiveSwitchedMs, e)
			}
		case timeline.TrafficRouted:
			if e.Object != old && e.To != "0%" {
				first(&u.FirstTrafficMs, e)
			}
			if e.Object != old && e.To == "100%" {
				first(&u.AllTrafficMs, e)
			}
		case timeline.OldClusterDeleted:
			first(&u.OldClusterDeletedMs, e)
		}
	}
	return u
}

// WriteText renders the report for a person; color adds ANSI colors. Around the upgrade's own
// section it has the availability sections every probed experiment shows (availability.WriteText).
func WriteText(w io.Writer, r *Report, color bool) error {
	var b strings.Builder
	s := r.Settings
	change := "patch " + s.Patch
	if s.Image != "" {
		change = "image " + s.Image
	}
	if r.Probe.WarmupFailed {
		fmt.Fprintf(&b, "Nothing was changed: the warm-up failed, so RayService %s in namespace %s was not patched.\n", s.RayService, s.Namespace)
		fmt.Fprintf(&b, "  probe     %s %s%s at %v/s, warm-up %s\n", s.Method, s.Target, s.Path, s.Rate, millis(s.WarmupMs))
		fmt.Fprintf(&b, "  requests  %d ok, %d failed\n", r.Totals.Status2xx+r.Totals.Status3xx, r.Totals.Errors)
		if len(r.Totals.ByStatus) > 0 {
			fmt.Fprintf(&b, "  by status: %s\n", availability.Counts(r.Totals.ByStatus))
		}
		if len(r.Totals.ByClass) > 0 {
			fmt.Fprintf(&b, "  by error class: %s\n", availability.Counts(r.Totals.ByClass))
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "Upgrade of rayservice/%s in namespace %s (%s)\n", s.RayService, s.Namespace, change)
	fmt.Fprintf(&b, "Probe: %s %s%s at %v/s, request timeout %dms, warm-up %dms, at most %s in all\n", s.Method, s.Target, s.Path, s.Rate, s.RequestTimeout, s.WarmupMs, millis(s.TimeoutMs))
	b.WriteString(availability.RanLines(r.Probe.Start, r.Probe.PatchAtMs, r.Probe.ProbeRun, "the patch", "nothing was patched"))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := availability.WriteText(w, &r.Availability, color, func(w io.Writer) error { return writeSteps(w, r.Upgrade) }); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\nkubectl ray never reverts an upgrade: the RayService keeps the patched spec.\n")
	return err
}

// writeSteps is the upgrade's own section: KubeRay's steps, from the patch.
func writeSteps(w io.Writer, u Steps) error {
	var b strings.Builder
	b.WriteString("\nUpgrade (from the patch)\n")
	step := func(name string, v *float64, extra string) {
		fmt.Fprintf(&b, "  %-25s %s\n", name, availability.StepAt(v, "  ", extra))
	}
	step("pending cluster created", u.PendingClusterCreatedMs, u.NewCluster)
	step("its head Ready", u.NewHeadReadyMs, "")
	step("its Serve apps RUNNING", u.ServeAppsReadyMs, "")
	if u.Strategy == string(rayv1.RayServiceNewClusterWithIncrementalUpgrade) {
		step("its first traffic", u.FirstTrafficMs, "through Gateway "+u.Gateway)
		step("all traffic on it", u.AllTrafficMs, "")
	}
	step("active cluster switched", u.ActiveSwitchedMs, "")
	step("old cluster deleted", u.OldClusterDeletedMs, u.OldCluster)
	fmt.Fprintf(&b, "  last seen: %s\n", u.LastSeen)
	_, err := io.WriteString(w, b.String())
	return err
}

func millis(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

// PlanKind identifies a chaos upgrade's dry-run plan (`--dry-run -o json`).
const PlanKind = "UpgradePlan"

// Plan is what an upgrade would do, checked by the API server's dry run of the patch;
// nothing was changed and no request was sent.
type Plan struct {
	APIVersion    string         `json:"apiVersion"`
	Kind          string         `json:"kind"`
	Settings      ReportSettings `json:"settings"`
	ActiveCluster string         `json:"activeCluster"`
	// Strategy and Gateway as in the report's upgrade section.
	Strategy string `json:"strategy"`
	Gateway  string `json:"gateway,omitempty"`
	// Patch is the JSON merge patch that would be applied.
	Patch json.RawMessage `json:"patch"`
	// Generation is the RayService's metadata.generation now; GenerationAfter is what the API
	// server's dry run of the patch returned (greater: the spec would change).
	Generation      int64                `json:"generation"`
	GenerationAfter int64                `json:"generationAfter"`
	PlannedRequests int                  `json:"plannedRequests"` // at most, if the run takes all of --timeout
	SLO             availability.PlanSLO `json:"slo"`
	ServerDryRun    string               `json:"serverDryRun"` // "accepted"
}

// WritePlanText writes the plan for a person.
func WritePlanText(w io.Writer, p *Plan) error {
	var b strings.Builder
	s := p.Settings
	fmt.Fprintf(&b, "Dry run of an upgrade of rayservice/%s in namespace %s: nothing is changed and no request is sent.\n", s.RayService, s.Namespace)
	fmt.Fprintf(&b, "Would patch:  %s (JSON merge patch)\n", p.Patch)
	if p.Gateway != "" {
		fmt.Fprintf(&b, "Active:       RayCluster %s; KubeRay starts a new one when spec.rayClusterConfig changes, then moves Serve capacity and traffic to it step by step through Gateway %s (NewClusterWithIncrementalUpgrade)\n", p.ActiveCluster, p.Gateway)
	} else {
		fmt.Fprintf(&b, "Active:       RayCluster %s; KubeRay starts a new one when spec.rayClusterConfig changes, then switches traffic to it\n", p.ActiveCluster)
	}
	fmt.Fprintf(&b, "Would probe:  %s %s%s at %v/s through a port-forward to each ready endpoint, warm-up %s (the patch is applied only if every warm-up request succeeds), at most %s in all (about %s)\n",
		s.Method, s.Target, s.Path, s.Rate, millis(s.WarmupMs), millis(s.TimeoutMs), availability.Plural(p.PlannedRequests, "request", "requests"))
	fmt.Fprintf(&b, "SLO:          %s, and the active cluster must switch\n", p.SLO)
	fmt.Fprintf(&b, "The API server accepted a dry run of the patch: generation %d -> %d.\n", p.Generation, p.GenerationAfter)
	_, err := io.WriteString(w, b.String())
	return err
}
