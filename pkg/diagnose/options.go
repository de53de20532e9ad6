package diagnose

import (
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Options are the thresholds rules measure against. The defaults are documented in docs/rules.md;
// they are long enough that a cluster recovering normally is not reported, and short enough that
// a head nobody will replace is.
type Options struct {
	// PendingTooLong: a head Pending this long without an Unschedulable verdict is reported, and
	// workers Unschedulable this long (worker-pending).
	PendingTooLong time.Duration
	// TerminatingMargin: a head whose deletionTimestamp (already the end of its grace period) is
	// this far in the past is stuck.
	TerminatingMargin time.Duration
	// OperatorGrace: how long a KubeRay >= v1.2.0 operator gets to replace a Failed head, and to
	// create the head of a new RayCluster, before doctor says it is not reconciling.
	OperatorGrace time.Duration
	// WorkersNotReadyWindow: workers not Ready for this long while the head is Ready are reported.
	WorkersNotReadyWindow time.Duration
	// RecentOOM: an OOMKilled last state older than this, on a container that is Ready again, is history.
	RecentOOM time.Duration
	// RecreateLoopHeads: this many head deletions within RecreateLoopWindow make a recreate loop.
	RecreateLoopHeads int
	// RecreateLoopWindow: how far back head deletions are counted.
	RecreateLoopWindow time.Duration
	// RecreateLoopSettled: a head Running and Ready this long ends the loop, whatever came before.
	RecreateLoopSettled time.Duration
	// StaleWorkersGrace: workers left from before the current head started, this long after it
	// became Ready, are reported (Ray's raylet gives up on a lost GCS after 60s by default).
	StaleWorkersGrace time.Duration
	// UpgradeStuckAfter: a RayService upgrading (UpgradeInProgress=True) this long while its
	// pending cluster has no Ready head is reported.
	UpgradeStuckAfter time.Duration
	// ServeEndpointsGrace: a serve Service created, or whose endpoints or RayService changed,
	// less than this ago is not judged (a traffic switch takes a reconcile or two).
	ServeEndpointsGrace time.Duration
	// FinalizerStuckAfter: a RayCluster deleting this long while it still carries the Redis
	// cleanup finalizer is reported (KubeRay's cleanup Job has a 5m deadline).
	FinalizerStuckAfter time.Duration
	// RayJobInitializingTooLong: a RayJob Initializing this long is reported with what holds its
	// cluster (the operator submits only once the cluster is ready).
	RayJobInitializingTooLong time.Duration
	// RayRegisterGrace: a pod Running and Ready this long that Ray's node table does not know is
	// reported (a raylet registers with the GCS within seconds of starting).
	RayRegisterGrace time.Duration
	// ServeDeployingTooLong: a Serve application DEPLOYING this long since it was last deployed
	// is reported.
	ServeDeployingTooLong time.Duration
	// SpecOnly runs only the rules of scope "spec" (what a spec alone tells: doctor -f offline),
	// no operator rule and no rule about live state.
	SpecOnly bool
	// Risks reports the risks of live clusters' specs too (riskRules; doctor --risks): without
	// it a live doctor leaves them out, so a healthy cluster stays silent.
	Risks bool
}

// DefaultOptions are the thresholds `kubectl ray doctor` uses.
func DefaultOptions() Options {
	return Options{
		PendingTooLong:            5 * time.Minute,
		RayRegisterGrace:          2 * time.Minute,
		ServeDeployingTooLong:     10 * time.Minute,
		TerminatingMargin:         1 * time.Minute,
		OperatorGrace:             2 * time.Minute,
		WorkersNotReadyWindow:     5 * time.Minute,
		RecentOOM:                 1 * time.Hour,
		RecreateLoopHeads:         3,
		RecreateLoopWindow:        30 * time.Minute,
		RecreateLoopSettled:       10 * time.Minute,
		StaleWorkersGrace:         3 * time.Minute,
		UpgradeStuckAfter:         20 * time.Minute,
		ServeEndpointsGrace:       1 * time.Minute,
		FinalizerStuckAfter:       10 * time.Minute,
		RayJobInitializingTooLong: 10 * time.Minute,
	}
}

// withDefaults fills zero thresholds, so Options{} behaves like DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.PendingTooLong <= 0 {
		o.PendingTooLong = d.PendingTooLong
	}
	if o.TerminatingMargin <= 0 {
		o.TerminatingMargin = d.TerminatingMargin
	}
	if o.OperatorGrace <= 0 {
		o.OperatorGrace = d.OperatorGrace
	}
	if o.WorkersNotReadyWindow <= 0 {
		o.WorkersNotReadyWindow = d.WorkersNotReadyWindow
	}
	if o.RecentOOM <= 0 {
		o.RecentOOM = d.RecentOOM
	}
	if o.RecreateLoopHeads <= 0 {
		o.RecreateLoopHeads = d.RecreateLoopHeads
	}
	if o.RecreateLoopWindow <= 0 {
		o.RecreateLoopWindow = d.RecreateLoopWindow
	}
	if o.RecreateLoopSettled <= 0 {
		o.RecreateLoopSettled = d.RecreateLoopSettled
	}
	if o.StaleWorkersGrace <= 0 {
		o.StaleWorkersGrace = d.StaleWorkersGrace
	}
	if o.RayRegisterGrace <= 0 {
		o.RayRegisterGrace = d.RayRegisterGrace
	}
	if o.ServeDeployingTooLong <= 0 {
		o.ServeDeployingTooLong = d.ServeDeployingTooLong
	}
	if o.UpgradeStuckAfter <= 0 {
		o.UpgradeStuckAfter = d.UpgradeStuckAfter
	}
	if o.ServeEndpointsGrace <= 0 {
		o.ServeEndpointsGrace = d.ServeEndpointsGrace
	}
	if o.FinalizerStuckAfter <= 0 {
		o.FinalizerStuckAfter = d.FinalizerStuckAfter
	}
	if o.RayJobInitializingTooLong <= 0 {
		o.RayJobInitializingTooLong = d.RayJobInitializingTooLong
	}
	return o
}

// TerminatingDeadline is the earliest time after s.Now at which a terminating Ray pod of s passes
// o.TerminatingMargin: then head-terminating-stuck can fire, and head-duplicate stops counting the
// pod as leaving, with no object changing. A watchdog examines the cluster again at that time;
// ok is false when no pod is on its way there.
func TerminatingDeadline(s *state.Snapshot, o Options) (at time.Time, ok bool) {
	o = o.withDefaults()
	for i := range s.Pods {
		dt := s.Pods[i].DeletionTimestamp
		if dt == nil {
			continue
		}
		if t := dt.Add(o.TerminatingMargin); t.After(s.Now) && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	return at, !at.IsZero()
}
