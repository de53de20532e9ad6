package workerkill

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/follow"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
	"github.com/kubectl-ray/kubectl-ray/pkg/schema"
)

// ReportKind identifies a worker kill's JSON report; docs/chaos-worker-kill.md documents it.
const ReportKind = "WorkerKillReport"

// ReportSettings echo what was asked, so a saved report says what it measured.
type ReportSettings struct {
	Target         string  `json:"cluster"` // "raycluster/demo" or "rayservice/demo"
	Namespace      string  `json:"namespace"`
	Mode           string  `json:"mode"`
	Count          int     `json:"count,omitempty"`
	Percent        float64 `json:"percent,omitempty"`
	Seed           int64   `json:"seed"`
	ServeReplicas  bool    `json:"serveReplicas,omitempty"`
	Probe          string  `json:"target"`
	Method         string  `json:"method"`
	Path           string  `json:"path"`
	Rate           float64 `json:"rate"`
	WarmupMs       int64   `json:"warmupMs"`
	AfterMs        int64   `json:"afterMs,omitempty"`
	UntilRecovered bool    `json:"untilRecovered,omitempty"`
	TimeoutMs      int64   `json:"timeoutMs"`
	RequestTimeout int64   `json:"requestTimeoutMs"`
}

// Section is what the kill did: the group, the workers killed, and the Ray pods KubeRay made.
type Section struct {
	Cluster string `json:"rayCluster"`
	Group   string `json:"group"`
	Live    int    `json:"liveWorkers"` // the group's live workers when they were chosen
	// ServeReplicas are, with --serve-replicas, the replicas Ray's view placed on each killed
	// worker (by NAMESPACE/NAME) when they were chosen.
	ServeReplicas map[string][]string `json:"serveReplicas,omitempty"`
	availability.Losses
}

// Report is one worker kill: head-kill's availability model around the kill, and the kill.
// Times named ...Ms are relative to the kill (to the probe start if there was none).
type Report struct {
	APIVersion string                 `json:"apiVersion"`
	Kind       string                 `json:"kind"`
	Settings   ReportSettings         `json:"settings"`
	Probe      availability.ProbeInfo `json:"probe"`

	availability.Availability `json:"-"`
	Kill                      Section `json:"-"`
}

// MarshalJSON writes the kill's section after the error window, where the schema has it.
func (r Report) MarshalJSON() ([]byte, error) {
	type head Report
	return availability.JSON(head(r), &r.Availability, "kill", r.Kill)
}

func (s *Settings) reportSettings(t *target) ReportSettings {
	cfg := s.config()
	rs := ReportSettings{Target: s.targetName(), Namespace: s.Namespace, Mode: s.Mode, Count: s.Count, Percent: s.Percent, Seed: s.Seed,
		ServeReplicas: s.ServeReplicas, Probe: s.probeTarget(t), Method: cfg.Method, Path: experiment.ShownPath(cfg.Path), Rate: cfg.Rate,
		WarmupMs: s.Warmup.Milliseconds(), TimeoutMs: s.Timeout.Milliseconds(), RequestTimeout: s.RequestTimeout.Milliseconds()}
	if s.UntilRecovered {
		rs.UntilRecovered = true
	} else {
		rs.AfterMs = s.After.Milliseconds()
	}
	return rs
}

func (s *Settings) buildReport(t *target, res *experiment.Result, tr *follow.Losses) *Report {
	in := availability.Input{Probe: res.Probe, Timeline: tr.Timeline(), SLO: s.SLO(), WarmupFailed: res.WarmupFailed, Reference: timeline.WorkersKilled}
	m := availability.Build(in)
	var pods []string
	ray := map[string]bool{}
	for _, p := range t.chosen {
		pods = append(pods, p.Namespace+"/"+p.Name)
		ray[p.Namespace+"/"+p.Name] = true
	}
	r := &Report{APIVersion: schema.APIVersion, Kind: ReportKind, Settings: s.reportSettings(t), Probe: m.Probe, Availability: m.Availability,
		Kill: Section{Cluster: t.cluster, Group: t.group, Live: t.live, ServeReplicas: t.chosenReplicas(), Losses: availability.BuildLosses(m.Events, pods, ray)}}
	r.Advice = advice(r, t)
	return r
}

// Advice rule IDs are stable: docs/chaos-worker-kill.md refers to them.
const (
	AdviceNoErrors     = "no-errors"
	AdviceErrorsKilled = "errors-from-killed-workers"
	AdviceErrorsOthers = "errors-from-other-pods"
	AdviceNotReplaced  = "not-replaced"
	AdvicePartial      = availability.AdvicePartial
	AdviceWarmupFailed = availability.AdviceWarmupFailed
	AdviceAllReplicas  = "all-replicas-killed"
)

// advice draws conclusions from this run only; each names the fact it rests on.
func advice(r *Report, t *target) []availability.Advice {
	out, more := availability.OpenAdvice(r.Probe, r.Totals, "Nothing was killed", "The workers are killed only after a warm-up in which every request succeeds.")
	if !more {
		return out
	}
	add, tot := out.Add, r.Totals
	if tot.Requests > 0 && tot.Errors == 0 {
		add(AdviceNoErrors, "No request failed: losing %s of group %s was invisible to this client at %v/s.",
			availability.Plural(len(t.chosen), "worker", "workers"), t.group, r.Settings.Rate)
	}
	killed := map[string]bool{}
	for _, p := range t.chosen {
		killed[p.Name] = true
	}
	fromKilled, fromOthers := 0, 0
	for _, e := range r.Endpoints {
		if killed[e.Name] {
			fromKilled += e.Errors
		} else {
			fromOthers += e.Errors
		}
	}
	if fromKilled > 0 {
		add(AdviceErrorsKilled, "%d of %s came through the killed workers' own proxies while they went: the Service still routed to them. "+
			"A preStop sleep longer than the endpoints' propagation (KubeRay sets none, kuberay #5004) lets a worker leave the Service first.",
			fromKilled, availability.Plural(tot.Errors, "error", "errors"))
	}
	if lost := t.wipedOut(); len(lost) > 0 {
		add(AdviceAllReplicas, "Every replica of %s was on the killed workers: Serve had none to route to until its controller placed new ones. "+
			"More replicas than workers lost, kept apart (Serve's max_replicas_per_node), keep it answering.", strings.Join(lost, ", "))
	}
	if fromOthers > 0 {
		add(AdviceErrorsOthers, "%d of %s came through pods that were not killed: requests they routed to replicas on the lost workers failed. "+
			"More replicas than workers lost, spread over the group, keep Serve answering.", fromOthers, availability.Plural(tot.Errors, "error", "errors"))
	}
	ready := 0
	for _, p := range r.Kill.Replacements {
		if p.ReadyMs != nil {
			ready++
		}
	}
	if ready < len(t.chosen) && !r.Probe.Interrupted {
		add(AdviceNotReplaced, "KubeRay had %d of %d killed workers replaced and Ready when the probe ended: lengthen %s or use %s.",
			ready, len(t.chosen), SetAfter, SetUntilRecovered)
	}
	return out
}

// WriteText renders the report for a person; color adds ANSI colors to the bars and verdict.
func WriteText(w io.Writer, r *Report, color bool) error {
	s := r.Settings
	var b strings.Builder
	if r.Probe.WarmupFailed {
		fmt.Fprintf(&b, "Nothing was killed: the warm-up failed, so no worker of %s in namespace %s was touched.\n", s.Target, s.Namespace)
		fmt.Fprintf(&b, "  probe     %s %s%s at %v/s, warm-up %dms\n", s.Method, s.Probe, s.Path, s.Rate, s.WarmupMs)
		fmt.Fprintf(&b, "  requests  %d ok, %d failed\n", r.Totals.Status2xx+r.Totals.Status3xx, r.Totals.Errors)
		_, err := io.WriteString(w, b.String())
		return err
	}
	k := r.Kill
	fmt.Fprintf(&b, "Worker kill of %s in namespace %s: %s %d of %d workers of group %s (seed %d)%s\n", s.Target, s.Namespace, s.Mode,
		len(k.Pods), k.Live, k.Group, s.Seed, amongHosts(s.ServeReplicas))
	for _, pod := range slices.Sorted(maps.Keys(k.ServeReplicas)) {
		fmt.Fprintf(&b, "  %s%s\n", pod, replicaList(k.ServeReplicas[pod]))
	}
	fmt.Fprintf(&b, "Probe: %s %s%s at %v/s, request timeout %dms, warm-up %dms", s.Method, s.Probe, s.Path, s.Rate, s.RequestTimeout, s.WarmupMs)
	if s.UntilRecovered {
		fmt.Fprintf(&b, ", until recovered (at most %dms)\n", s.TimeoutMs)
	} else {
		fmt.Fprintf(&b, ", %dms after the kill\n", s.AfterMs)
	}
	b.WriteString(availability.RanLines(r.Probe.Start, r.Probe.KillAtMs, r.Probe.ProbeRun, "the kill", "nothing was killed"))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return availability.WriteText(w, &r.Availability, color, func(w io.Writer) error {
		if _, err := fmt.Fprintf(w, "\nWorkers killed (from the kill)\n"); err != nil {
			return err
		}
		return availability.WriteLosses(w, r.Kill.Losses, "the kill")
	})
}
