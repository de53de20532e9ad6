package pressure

import (
	"io"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// The settings messages name; the command shows each as its flag.
const (
	SetAmount          chaos.Setting = "amount" // --size (disk) or --bytes (memory)
	SetPercent         chaos.Setting = "percent"
	SetFill            chaos.Setting = "fill"
	SetDuration        chaos.Setting = "duration"
	SetForce           chaos.Setting = "force"
	SetTargetContainer chaos.Setting = "target-container"
	SetRole            chaos.Setting = "role"
	SetTimeout         chaos.Setting = "timeout"
)

// Settings is one pressure run: which pod, what container, and what to do after injecting it.
type Settings struct {
	Options
	Namespace string
	// Cluster and Role pick the RayCluster's head or first Running worker; Pod names a pod
	// instead. Exactly one of Cluster and Pod is set.
	Cluster string
	Role    string // head or worker
	// RoleSet: Role was asked for explicitly (it has no meaning with Pod).
	RoleSet bool
	Pod     string

	// DryRun has the API server validate the container; nothing is injected.
	DryRun bool
	// Watch follows the pod and its node after the injection, for at most Timeout.
	Watch   bool
	Timeout time.Duration

	// Confirm is asked before the injection; an error stops the run with nothing injected.
	Confirm chaos.Confirm
	// Progress hears each line as it happens: the injection, then the timeline (may be nil).
	Progress io.Writer
	// Warn hears what the run can go on without (may be nil).
	Warn io.Writer
	Now  func() time.Time
}

// Validate checks the settings alone, before any API request, so bad input injects nothing.
func (s Settings) Validate() error {
	if s.Role != ray.NodeTypeHead && s.Role != ray.NodeTypeWorker {
		return invalid("%s must be head or worker, not %q", SetRole, s.Role)
	}
	if s.Pod != "" && s.RoleSet {
		return invalid("%s applies to a RAYCLUSTER argument, not to pod/%s", SetRole, s.Pod)
	}
	if s.Namespace == "kube-system" {
		return invalid("refusing to put pressure on pods in kube-system: it is never a chaos target")
	}
	if s.Timeout <= 0 {
		return invalid("%s must be positive", SetTimeout)
	}
	return s.Options.Validate()
}

func invalid(format string, args ...any) error { return chaos.Errorf(chaos.Invalid, format, args...) }
