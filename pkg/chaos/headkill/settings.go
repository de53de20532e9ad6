package headkill

import (
	"fmt"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// The settings of a head kill that messages name; the command shows each as its flag. The
// probe's are experiment's (SetRate, SetPort, SetPath, SetHeader...).
const (
	SetMode           fault.Field = "mode"
	SetAfter          fault.Field = "after"
	SetUntilRecovered fault.Field = "until-recovered"
	SetTimeout        fault.Field = "timeout"
	SetTarget                     = experiment.SetTarget
	SetService                    = experiment.SetService
)

// Settings is one head kill: what to kill, what to probe, for how long, and the SLO.
type Settings struct {
	Namespace string
	// Cluster names the RayCluster whose head is killed, or RayService the RayService whose
	// active cluster's is. Exactly one is set.
	Cluster, RayService string
	Mode                string // delete, force or evict

	// What is probed: Target (a URL), or Service and Port (for a RayService, by default its
	// serve Service on experiment.DefaultServePort), and for how long; Timeout bounds only a run
	// with UntilRecovered. The requests are ProbeSettings'.
	experiment.Aim

	// Doctor, when set, is doctor's advice for the report (the command runs the rules).
	Doctor Doctor

	experiment.ProbeSettings
}

// killMode is Mode as the API calls take it (Validate has checked it).
func (s *Settings) killMode() kube.KillMode { return kube.KillMode(s.Mode) }

// targetBase is Target's scheme://host[:port] (Validate has checked it is an http(s) URL).
func (s *Settings) targetBase() string { return experiment.TargetBase(s.Target) }

func invalid(format string, args ...any) error { return fault.Errorf(fault.Invalid, format, args...) }

// Validate checks every setting before the API is touched: bad input kills nothing.
func (s *Settings) Validate() error {
	switch s.killMode() {
	case kube.KillDelete, kube.KillForce, kube.KillEvict:
	default:
		return invalid("%s must be delete, force or evict, not %q", SetMode, s.Mode)
	}
	if err := s.validateSchedule(); err != nil {
		return err
	}
	if err := s.ValidateTarget(s.RayService != "", "say what to probe for RayCluster %s: %s URL, or %s NAME %s N",
		s.Cluster, SetTarget, SetService, experiment.SetPort); err != nil {
		return err
	}
	return s.ValidateAt("the head is killed", s.Target, s.Post())
}

// validateSchedule is not Aim's: a head kill needs Timeout only with UntilRecovered.
func (s *Settings) validateSchedule() error {
	switch {
	case s.UntilRecovered && s.AfterSet:
		return invalid("%s and %s exclude each other: give one", SetAfter, SetUntilRecovered)
	case s.UntilRecovered && s.Timeout <= 0:
		return invalid("%s must be positive, e.g. %s 5m", SetTimeout, SetTimeout)
	case !s.UntilRecovered && s.After <= 0:
		return invalid("%s must be positive, e.g. %s 60s", SetAfter, SetAfter)
	}
	return nil
}

// config is the probe's configuration (Validate has checked the settings).
func (s *Settings) config() probe.Config { return s.ConfigAt(s.Target) }

// reportSettings echo what was asked, for the report and the dry-run plan.
func (s *Settings) reportSettings(t *target) ReportSettings {
	rs := ReportSettings{Cluster: s.targetName(), Namespace: s.Namespace, Mode: s.Mode, Target: s.probeTarget(t),
		Method: s.config().Method, Path: experiment.ShownPath(s.config().Path), Rate: s.config().Rate, WarmupMs: s.Warmup.Milliseconds(),
		RequestTimeout: s.RequestTimeout.Milliseconds()}
	if s.UntilRecovered {
		rs.UntilRecovered, rs.TimeoutMs = true, s.Timeout.Milliseconds()
	} else {
		rs.AfterMs = s.After.Milliseconds()
	}
	return rs
}

func (s *Settings) targetName() string {
	if s.RayService != "" {
		return "rayservice/" + s.RayService
	}
	return s.Cluster
}

func (s *Settings) probeTarget(t *target) string { return s.ProbeTarget(t.service) }

func (s *Settings) killWhat(t *target) string {
	switch s.killMode() {
	case kube.KillForce:
		return "force-delete (grace period 0)"
	case kube.KillEvict:
		return "evict (Eviction API, PodDisruptionBudgets apply)"
	}
	grace := "the pod's"
	if g := t.head.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = fmt.Sprintf("%ds", *g)
	}
	return fmt.Sprintf("delete (grace period %s)", grace)
}
