// Package drain is `kubectl ray chaos drain`: what `kubectl drain` does to a node (cordon, then
// evict its pods through the Eviction API, honouring PodDisruptionBudgets), run under the probe
// on the experiment engine, with the node uncordoned when the run ends. Nodes are drained far more
// often than heads are killed (spot preemption, node-pool upgrades, consolidation), and KubeRay
// sets no PodDisruptionBudget of its own (kuberay #5004, #1333). The tracker is pure; the API
// calls are pkg/kube's (kubectl's drain library for the cordon and the pod filters).
package drain

import (
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// The settings of a drain that messages name; the command shows each as its flag.
const (
	SetNodeOf          fault.Field = "node-of"
	SetRole            fault.Field = "role"
	SetTimeout                     = experiment.SetTimeout
	SetGracePeriod     fault.Field = "grace-period"
	SetIgnoreDaemonSet fault.Field = "ignore-daemonsets"
	SetDeleteEmptyDir  fault.Field = "delete-emptydir-data"
	SetForce           fault.Field = "force"
	SetAnyPods         fault.Field = "any-pods"
	SetService                     = experiment.SetService
	SetTarget                      = experiment.SetTarget
)

// Roles --role takes.
const (
	RoleHead   = "head"
	RoleWorker = "worker"
	RoleAny    = "any"
)

// RetryRefused is how long a refused eviction waits before it is asked again, as kubectl
// drain waits.
const RetryRefused = 5 * time.Second

// Settings is one drain: which node, which of its pods, what to probe, for how long.
type Settings struct {
	Namespace string // the probed Service's, and --node-of's
	// Node names the node; or NodeOf a RayCluster or RayService (Kind and Name) and Role which
	// of its pods picks the node. Exactly one is set.
	Node   string
	NodeOf ray.Target
	Role   string

	kube.DrainFilter
	GracePeriod     int64 // seconds; < 0: each pod's own
	DisableEviction bool  // delete instead of evict, as kubectl drain --disable-eviction
	KeepCordoned    bool
	AnyPods         bool // drain a node with no Ray pod

	// What is probed and for how long (by default, for --node-of rayservice/NAME, its serve
	// Service on experiment.DefaultServePort); Timeout also bounds the evictions (a refused one
	// is retried until then).
	experiment.Aim
	experiment.ProbeSettings

	// HeadStateRule is doctor's rule that says when a head would lose its state, named by the
	// advice when a head was on the node (the command names it: an experiment imports no rule).
	HeadStateRule string
}

func invalid(format string, args ...any) error { return fault.Errorf(fault.Invalid, format, args...) }

// Validate checks every setting before the API is touched: bad input drains nothing.
func (s *Settings) Validate() error {
	switch {
	case s.Node == "" && s.NodeOf.Name == "":
		return invalid("name the node to drain, or pick it with %s raycluster/NAME|rayservice/NAME", SetNodeOf)
	case s.Node != "" && s.NodeOf.Name != "":
		return invalid("a NODE and %s exclude each other: give one", SetNodeOf)
	}
	switch s.Role {
	case RoleHead, RoleWorker, RoleAny:
	default:
		return invalid("%s must be head, worker or any, not %q", SetRole, s.Role)
	}
	if err := s.Aim.Validate(s.NodeOf.Kind == ray.KindRayService, "say what to probe while the node drains: %s NAME %s N, %s URL, or %s rayservice/NAME (its serve Service)",
		SetService, experiment.SetPort, SetTarget, SetNodeOf); err != nil {
		return err
	}
	return s.ValidateAt("the node is drained", s.Target, s.Post())
}

// how says how each pod goes, for the timeline and the plan.
func (s *Settings) how() string {
	if s.DisableEviction {
		return "delete"
	}
	return "evict"
}
