package evidence

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// PodGetter reads one pod; *kube.Clients is one.
type PodGetter interface {
	GetPodByName(ctx context.Context, namespace, name string) (*corev1.Pod, error)
}

// Keeper is heal's repair.Executor.Keep: it reads the pod whole, takes its evidence and puts it
// where it survives. The pod is read again (one GET per pod heal deletes) because the pods of
// doctor's snapshot and of the watchdog's informers are trimmed to what rules read: their
// sidecars and init containers, whose logs matter, are gone from them.
type Keeper struct {
	Taker
	Pods PodGetter
	// Timeout bounds all the reads of one pod, so a kubelet that does not answer (a head on a
	// dead node) delays its heal by at most this long.
	Timeout time.Duration
	// Snapshot lends the redactor the secrets of the action's cluster (its spec's Redis
	// password); nil, or a nil result, knows the pod's own only.
	Snapshot func(repair.Action) *state.Snapshot
	// Put keeps the evidence and says where: WriteDir for one-shot heal, LogLines for the
	// watchdog. An error with a place means it was kept there but not everywhere asked.
	Put func(Evidence) (string, error)
}

// Keep keeps the evidence of the pod a deletes. A pod replaced since the plan (another UID) is
// not kept: it is not the pod heal deletes, and the delete's precondition will refuse it anyway.
func (k Keeper) Keep(ctx context.Context, a repair.Action) (string, error) {
	if k.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, k.Timeout)
		defer cancel()
	}
	pod, err := k.Pods.GetPodByName(ctx, a.Pod.Namespace, a.Pod.Name)
	if err != nil {
		return "", fmt.Errorf("not kept: %w", err)
	}
	if string(pod.UID) != a.Pod.UID {
		return "", fmt.Errorf("not kept: the pod was replaced since it was seen (uid %s, not %s)", pod.UID, a.Pod.UID)
	}
	var s *state.Snapshot
	if k.Snapshot != nil {
		s = k.Snapshot(a)
	}
	ev := k.Take(ctx, Subject{Pod: pod, Cluster: a.Cluster, Rule: a.Rule, Why: a.Why}, s)
	where, err := k.Put(ev)
	switch {
	case err != nil && where == "":
		return "", fmt.Errorf("not kept: %w", err)
	case err != nil:
		// Kept in one place of two (the watchdog's log, not its directory).
		return where, fmt.Errorf("kept in %s only: %w", where, err)
	}
	if n := len(ev.Gaps); n > 0 {
		return where, fmt.Errorf("kept without %s (%s: %s)", plural(n, "read"), ev.Gaps[0].What, ev.Gaps[0].Reason)
	}
	return where, nil
}

// DefaultDir is where one-shot heal keeps evidence, relative to the working directory: beside
// whoever ran it, named in heal's output.
const DefaultDir = "kubectl-ray-evidence"

// Limits are the log reads heal makes of a pod it deletes: the last lines of each log, enough
// for a crash's traceback, bounded so a chatty pod cannot hold its heal back.
var Limits = artifact.LogLimits{Tail: 500, LimitBytes: 1 << 20}

// DefaultTimeout bounds one pod's evidence reads.
const DefaultTimeout = 10 * time.Second
