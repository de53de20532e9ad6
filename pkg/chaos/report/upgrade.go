package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/schema"
)

// UpgradeKind identifies a chaos upgrade's JSON report; docs/chaos-upgrade.md documents the schema.
const UpgradeKind = "UpgradeReport"

// UpgradeSettings echo what was asked, so a saved report says what it measured.
type UpgradeSettings struct {
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

// UpgradeSteps are KubeRay's steps of the upgrade, in milliseconds after the patch; null when
// not seen.
type UpgradeSteps struct {
	OldCluster              string   `json:"oldCluster"`
	NewCluster              string   `json:"newCluster,omitempty"`
	PendingClusterCreatedMs *float64 `json:"pendingClusterCreatedMs"`
	NewHeadReadyMs          *float64 `json:"newHeadReadyMs"`
	ServeAppsReadyMs        *float64 `json:"serveAppsReadyMs"`
	ActiveSwitchedMs        *float64 `json:"activeSwitchedMs"`
	OldClusterDeletedMs     *float64 `json:"oldClusterDeletedMs"`
	// Switched: the RayService's active cluster changed to another one.
	Switched bool `json:"switched"`
	// LastSeen is the RayService's upgrade as last seen, in words.
	LastSeen string `json:"lastSeen"`
}

// UpgradeProbe says how the probe itself went; PatchAtMs is the patch after the probe start.
type UpgradeProbe struct {
	Start     time.Time `json:"start"`
	PatchAtMs *float64  `json:"patchAtMs"`
	ProbeRun
}

// UpgradeReport is one chaos upgrade: head-kill's availability model (totals, error window,
// per-endpoint table, latency, per-second bars, SLO verdict) around the patch, and the upgrade's
// steps. Times named ...Ms are relative to the patch (to the probe start if none was applied).
type UpgradeReport struct {
	APIVersion  string          `json:"apiVersion"`
	Kind        string          `json:"kind"`
	Settings    UpgradeSettings `json:"settings"`
	Probe       UpgradeProbe    `json:"probe"`
	Totals      Totals          `json:"totals"`
	ErrorWindow *Window         `json:"errorWindow"`
	Upgrade     UpgradeSteps    `json:"upgrade"`
	Endpoints   []Endpoint      `json:"endpoints"`
	Latency     Latency         `json:"latency"`
	Seconds     []Second        `json:"seconds"`
	Events      []Event         `json:"events"`
	Verdict     Verdict         `json:"verdict"`
}

// UpgradeInput is everything BuildUpgrade needs besides head-kill's Input (its Settings are
// left empty; Reference is set here).
type UpgradeInput struct {
	Input
	Settings   UpgradeSettings
	OldCluster string
	LastSeen   string
}

// CheckSwitch is the verdict's check that the upgrade happened: the active cluster switched.
const CheckSwitch = "switch"

// BuildUpgrade computes the report; it is pure.
func BuildUpgrade(in UpgradeInput) *UpgradeReport {
	in.Input.Reference = timeline.UpgradePatched
	in.Input.Advice = nil
	base := Build(in.Input)
	r := &UpgradeReport{APIVersion: schema.APIVersion, Kind: UpgradeKind, Settings: in.Settings,
		Probe:  UpgradeProbe{Start: base.Probe.Start, PatchAtMs: base.Probe.KillAtMs, ProbeRun: base.Probe.ProbeRun},
		Totals: base.Totals, ErrorWindow: base.ErrorWindow, Endpoints: base.Endpoints, Latency: base.Latency,
		Seconds: base.Seconds, Events: base.Events, Verdict: base.Verdict}
	for i, c := range r.Verdict.Checks {
		if c.Name == "warm-up" {
			r.Verdict.Checks[i].Message = strings.Replace(c.Message, "nothing was killed", "nothing was patched", 1)
		}
	}
	r.Upgrade = upgradeSteps(r.Events, in.OldCluster, in.LastSeen)
	if r.Probe.PatchAtMs != nil {
		c := Check{Name: CheckSwitch, Passed: r.Upgrade.Switched}
		if c.Passed {
			c.Message = fmt.Sprintf("traffic switched from %s to %s", in.OldCluster, r.Upgrade.NewCluster)
		} else {
			c.Message = "the active cluster never switched: " + in.LastSeen
		}
		r.Verdict.Checks = append([]Check{c}, r.Verdict.Checks...)
		r.Verdict.Passed = r.Verdict.Passed && c.Passed
	}
	return r
}

func upgradeSteps(events []Event, old, lastSeen string) UpgradeSteps {
	u := UpgradeSteps{OldCluster: old, LastSeen: lastSeen}
	patched := false
	first := func(dst **float64, e Event) {
		if *dst == nil {
			*dst = ptr(e.AtMs)
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
		case timeline.OldClusterDeleted:
			first(&u.OldClusterDeletedMs, e)
		}
	}
	return u
}

// WriteUpgradeText renders the report for a person; color adds ANSI colors.
func WriteUpgradeText(w io.Writer, r *UpgradeReport, color bool) error {
	p := &printer{w: w}
	s := r.Settings
	change := "patch " + s.Patch
	if s.Image != "" {
		change = "image " + s.Image
	}
	if r.Probe.WarmupFailed {
		p.f("Nothing was changed: the warm-up failed, so RayService %s in namespace %s was not patched.\n", s.RayService, s.Namespace)
		p.f("  probe     %s %s%s at %v/s, warm-up %s\n", s.Method, s.Target, s.Path, s.Rate, millis(s.WarmupMs))
		p.f("  requests  %d ok, %d failed\n", r.Totals.Status2xx+r.Totals.Status3xx, r.Totals.Errors)
		if len(r.Totals.ByStatus) > 0 {
			p.f("  by status: %s\n", kv(r.Totals.ByStatus))
		}
		if len(r.Totals.ByClass) > 0 {
			p.f("  by error class: %s\n", kv(r.Totals.ByClass))
		}
		return p.e
	}
	p.f("Upgrade of rayservice/%s in namespace %s (%s)\n", s.RayService, s.Namespace, change)
	p.f("Probe: %s %s%s at %v/s, request timeout %dms, warm-up %dms, at most %s in all\n", s.Method, s.Target, s.Path, s.Rate, s.RequestTimeout, s.WarmupMs, millis(s.TimeoutMs))
	ref := "the probe start (nothing was patched)"
	if r.Probe.PatchAtMs != nil {
		ref = fmt.Sprintf("the patch, %s after the probe started", secs(*r.Probe.PatchAtMs))
	}
	p.f("Ran %s from %s; times below are relative to %s.\n", secs(r.Probe.ElapsedMs), r.Probe.Start.UTC().Format("2006-01-02T15:04:05.000Z"), ref)
	if r.Probe.Interrupted {
		p.f("Interrupted: %d of %s were scheduled.\n", r.Probe.Scheduled, Plural(r.Probe.Planned, "planned request", "planned requests"))
	}
	writeTotals(p, w, r.Totals)
	writeErrorWindow(p, r.ErrorWindow)

	u := r.Upgrade
	p.f("\nUpgrade (from the patch)\n")
	step := func(name string, v *float64, extra string) { p.f("  %-25s %s\n", name, stepValue(v, "  ", extra)) }
	step("pending cluster created", u.PendingClusterCreatedMs, u.NewCluster)
	step("its head Ready", u.NewHeadReadyMs, "")
	step("its Serve apps RUNNING", u.ServeAppsReadyMs, "")
	step("active cluster switched", u.ActiveSwitchedMs, "")
	step("old cluster deleted", u.OldClusterDeletedMs, u.OldCluster)
	p.f("  last seen: %s\n", u.LastSeen)

	writeEndpoints(p, w, r.Endpoints)
	writeLatency(p, r.Latency)
	writeSeconds(p, r.Seconds, color)
	writeEvents(p, r.Events)
	writeVerdict(p, r.Verdict, color)
	p.f("\nkubectl ray never reverts an upgrade: the RayService keeps the patched spec.\n")
	return p.e
}

// UpgradePlanKind identifies a chaos upgrade's dry-run plan (`--dry-run -o json`).
const UpgradePlanKind = "UpgradePlan"

// UpgradePlan is what an upgrade would do, checked by the API server's dry run of the patch;
// nothing was changed and no request was sent.
type UpgradePlan struct {
	APIVersion    string          `json:"apiVersion"`
	Kind          string          `json:"kind"`
	Settings      UpgradeSettings `json:"settings"`
	ActiveCluster string          `json:"activeCluster"`
	// Patch is the JSON merge patch that would be applied.
	Patch json.RawMessage `json:"patch"`
	// Generation is the RayService's metadata.generation now; GenerationAfter is what the API
	// server's dry run of the patch returned (greater: the spec would change).
	Generation      int64   `json:"generation"`
	GenerationAfter int64   `json:"generationAfter"`
	PlannedRequests int     `json:"plannedRequests"` // at most, if the run takes all of --timeout
	SLO             PlanSLO `json:"slo"`
	ServerDryRun    string  `json:"serverDryRun"` // "accepted"
}

// WriteUpgradePlanText writes the plan for a person.
func WriteUpgradePlanText(w io.Writer, p *UpgradePlan) error {
	pr := &printer{w: w}
	s := p.Settings
	pr.f("Dry run of an upgrade of rayservice/%s in namespace %s: nothing is changed and no request is sent.\n", s.RayService, s.Namespace)
	pr.f("Would patch:  %s (JSON merge patch)\n", p.Patch)
	pr.f("Active:       RayCluster %s; KubeRay starts a new one when spec.rayClusterConfig changes, then switches traffic to it\n", p.ActiveCluster)
	pr.f("Would probe:  %s %s%s at %v/s through a port-forward to each ready endpoint, warm-up %s (the patch is applied only if every warm-up request succeeds), at most %s in all (about %s)\n",
		s.Method, s.Target, s.Path, s.Rate, millis(s.WarmupMs), millis(s.TimeoutMs), Plural(p.PlannedRequests, "request", "requests"))
	pr.f("SLO:          %s, and the active cluster must switch\n", p.SLO)
	pr.f("The API server accepted a dry run of the patch: generation %d -> %d.\n", p.Generation, p.GenerationAfter)
	return pr.e
}
