package diagnose

import (
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Facts are what heal reads of a finding, typed, so that heal parses no string: Evidence says the
// same things in words for people and scripts, and may change its wording; Facts are the contract
// between doctor and heal. They never reach doctor's output (json:"-"): the JSON schema is
// Evidence's. Each field names the rules that set it; on other rules it is zero.
type Facts struct {
	// Operator names the operator in messages' words ("KubeRay v1.1.1", "no KubeRay operator"):
	// head-evicted, head-terminated, head-restart-disabled, gcs-ft-finalizer-stuck.
	Operator string
	// OperatorReplacesBy is when the operator's grace for a terminal head ends: until then the head
	// is the operator's to replace, and heal leaves it alone. Zero once the grace is over, and for
	// an operator that never replaces it. head-evicted, head-terminated.
	OperatorReplacesBy time.Time
	// NodeDown: the pod is stuck Terminating on a node shown to be down or gone, the one case whose
	// remedy is a force delete. head-terminating-stuck.
	NodeDown bool
	// Pods are the pods the finding is about beyond Object: workers-stale's stale workers.
	Pods []state.
		// Head is the head the finding compares against: workers-stale's new head, head-recreate-loop's
		// current head ("" when there is none).
		Ref

	Head string
	// CleanupJobComplete: the RayCluster's Redis cleanup Job completed, so removing the finalizer
	// leaves nothing in Redis. gcs-ft-finalizer-stuck.
	CleanupJobComplete bool
	// Loop is head-recreate-loop's count.
	Loop *RecreateLoop
}

// RecreateLoop is how often a head was deleted and created again (head-recreate-loop).
type RecreateLoop struct {
	Deletions int
	// Window is the time from the first counted deletion to now.
	Window time.Duration
	// LastExit is the last exit of the head's containers, when known.
	LastExit *Exit
}

// Exit is a container's termination: its code and the kubelet's reason.
type Exit struct {
	Code   int
	Reason string
}

// Age formats d as doctor's messages and kubectl do ("12m", "3h4m"); a negative duration (clock
// skew) reads "0s". Exported for heal's messages, which quote the same durations.
func Age(d time.Duration) string { return age(d) }
