// Package workerkill is `kubectl ray chaos worker-kill`: kill some workers of a group, chosen at
// random with a printed seed, under the probe on the experiment engine, and report what clients
// saw and where KubeRay recreated each worker. A worker lost is the everyday failure of a Ray
// cluster (spot preemption, an OOM kill, a node gone); what Serve's clients see depends on the
// replicas and proxies that lived on it (kuberay #1333). The follow half is the engine's Losses.
package workerkill

import (
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// The settings of a worker kill that messages name; the command shows each as its flag.
const (
	SetGroup          fault.Field = "group"
	SetCount          fault.Field = "count"
	SetPercent        fault.Field = "percent"
	SetMode           fault.Field = "mode"
	SetServeReplicas  fault.Field = "serve-replicas"
	SetAfter                      = experiment.SetAfter
	SetUntilRecovered             = experiment.SetUntilRecovered
	SetTimeout                    = experiment.SetTimeout
)

// Settings is one worker kill: which workers, what to probe, for how long.
type Settings struct {
	Namespace string
	// Cluster names the RayCluster, or RayService the RayService whose active cluster's workers
	// are killed. Exactly one is set.
	Cluster, RayService string
	// Group is the worker group; "" picks the cluster's only group.
	Group string
	// Count workers, or Percent of the group's live workers (rounded up, at least one).
	Count   int
	Percent float64
	// ServeReplicas picks among the workers that Ray's view (the head's dashboard) says host
	// Serve replicas, instead of among all; with neither Count nor Percent it kills them all.
	ServeReplicas bool
	// Seed picks the workers; the report and the plan print it, so a run can be repeated.
	Seed int64
	Mode string // delete, force or evict

	// What is probed and for how long (for rayservice/NAME, by default its serve Service).
	experiment.Aim
	experiment.ProbeSettings
}

func invalid(format string, args ...any) error { return fault.Errorf(fault.Invalid, format, args...) }

// Validate checks every setting before the API is touched: bad input kills nothing.
func (s *Settings) Validate() error {
	switch kube.KillMode(s.Mode) {
	case kube.KillDelete, kube.KillForce, kube.KillEvict:
	default:
		return invalid("%s must be delete, force or evict, not %q", SetMode, s.Mode)
	}
	switch {
	case s.Count > 0 && s.Percent > 0:
		return invalid("say how many workers to kill with one of %s N and %s P, not both", SetCount, SetPercent)
	case s.Count == 0 && s.Percent == 0 && !s.ServeReplicas:
		return invalid("say which workers to kill: %s N, %s P, or %s", SetCount, SetPercent, SetServeReplicas)
	case s.Count < 0:
		return invalid("%s must be positive, not %d", SetCount, s.Count)
	case s.Percent < 0 || s.Percent > 100:
		return invalid("%s is a percentage from 0 to 100, not %v", SetPercent, s.Percent)
	}
	if err := s.Aim.Validate(s.RayService != "", "say what to probe for RayCluster %s: %s URL, or %s NAME %s N",
		s.Cluster, experiment.SetTarget, experiment.SetService, experiment.SetPort); err != nil {
		return err
	}
	return s.ValidateAt("the workers are killed", s.Target, s.Post())
}

func (s *Settings) targetName() string {
	if s.RayService != "" {
		return "rayservice/" + s.RayService
	}
	return "raycluster/" + s.Cluster
}
