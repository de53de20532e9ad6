package pressure

import (
	"io"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// The settings messages name; the command shows each as its flag.
const (
	SetAmount          fault.Field = "amount" // --size (disk) or --bytes (memory)
	SetPercent         fault.Field = "percent"
	SetFill            fault.Field = "fill"
	SetDuration        fault.Field = "duration"
	SetForce           fault.Field = "force"
	SetTargetContainer fault.Field = "target-container"
	SetRole            fault.Field = "role"
	SetTimeout         fault.Field = "timeout"
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

func invalid(format string, args ...any) error { return fault.Errorf(fault.Invalid, format, args...) }
