package accept

import (
	"fmt"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// ThresholdInfo is one of diagnose.Options' thresholds as users set it: a flag of doctor and
// heal, and a key under thresholds: in an accept file. Flags win over files.
type ThresholdInfo struct {
	// Key under thresholds: in an accept file.
	Key string
	// Flag, without the dashes.
	Flag  string
	Usage string
	// Field is the diagnose.Options field it sets.
	Field func(*diagnose.Options) *time.Duration
}

// ThresholdTable is every threshold users can set, in the order help and docs list them. A new
// diagnose.Options duration is one line here (then docs/doctor.md and docs/rules.md list it). A
// threshold that is a count, not a duration, needs a Count field beside Field, an IntVar flag in
// AddFlags and an integer parse in parser.thresholds.
var ThresholdTable = []ThresholdInfo{
	{"pendingTooLong", "pending-too-long", "Report a head Pending this long without an Unschedulable verdict, and workers Unschedulable this long",
		func(o *diagnose.Options) *time.Duration { return &o.PendingTooLong }},
	{"terminatingMargin", "terminating-margin", "Report a head still there this long after its deletion grace period ended as stuck",
		func(o *diagnose.Options) *time.Duration { return &o.TerminatingMargin }},
	{"operatorGrace", "operator-grace", "Time a KubeRay >= v1.2.0 operator gets to replace a failed head or create a missing one",
		func(o *diagnose.Options) *time.Duration { return &o.OperatorGrace }},
	{"workersNotReadyWindow", "workers-not-ready-window", "Report workers not Ready this long while the head is Ready",
		func(o *diagnose.Options) *time.Duration { return &o.WorkersNotReadyWindow }},
	{"recentOOM", "recent-oom", "An OOMKilled last state older than this, on a container Ready again, is history",
		func(o *diagnose.Options) *time.Duration { return &o.RecentOOM }},
	{"recreateLoopWindow", "recreate-loop-window", "Count head deletions this far back for head-recreate-loop",
		func(o *diagnose.Options) *time.Duration { return &o.RecreateLoopWindow }},
	{"recreateLoopSettled", "recreate-loop-settled", "A head Running and Ready this long ends a head-recreate-loop",
		func(o *diagnose.Options) *time.Duration { return &o.RecreateLoopSettled }},
	{"staleWorkersGrace", "stale-workers-grace", "Report workers left from before the current head this long after it became Ready",
		func(o *diagnose.Options) *time.Duration { return &o.StaleWorkersGrace }},
	{"upgradeStuckAfter", "upgrade-stuck-after", "Report a RayService upgrade whose pending cluster has no Ready head after this long",
		func(o *diagnose.Options) *time.Duration { return &o.UpgradeStuckAfter }},
	{"serveEndpointsGrace", "serve-endpoints-grace", "Judge a serve Service's endpoints only this long after they or the RayService changed",
		func(o *diagnose.Options) *time.Duration { return &o.ServeEndpointsGrace }},
	{"finalizerStuckAfter", "finalizer-stuck-after", "Report a RayCluster whose deletion the Redis cleanup finalizer holds this long",
		func(o *diagnose.Options) *time.Duration { return &o.FinalizerStuckAfter }},
	{"rayJobInitializingTooLong", "rayjob-initializing-too-long", "Report a RayJob Initializing this long, with what holds its RayCluster",
		func(o *diagnose.Options) *time.Duration { return &o.RayJobInitializingTooLong }},
	{"rayRegisterGrace", "ray-register-grace", "With Ray's view: report a pod Running and Ready this long that Ray's node table does not know",
		func(o *diagnose.Options) *time.Duration { return &o.RayRegisterGrace }},
	{"serveDeployingTooLong", "serve-deploying-too-long", "With Ray's view: report a Serve application DEPLOYING this long since it was last deployed",
		func(o *diagnose.Options) *time.Duration { return &o.ServeDeployingTooLong }},
}

// ParseThreshold reads a threshold value: a Go duration (90s, 5m, 1h30m), positive. Zero is
// refused, not read as "report at once": diagnose reads a zero threshold as its default.
func ParseThreshold(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration; write it with a unit, e.g. 90s, 5m or 1h", s)
	}
	return d, CheckThreshold(d)
}

// CheckThreshold refuses zero and negative thresholds.
func CheckThreshold(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s must be positive, e.g. 90s, 5m or 1h", d)
	}
	return nil
}

// Options are diagnose's defaults with the thresholds of s applied; flags then override them.
// A threshold set in two files is an error naming both: which one wins would be a guess.
func (s *Set) Options() diagnose.Options {
	o := diagnose.DefaultOptions()
	if s == nil {
		return o
	}
	for _, t := range ThresholdTable {
		if v, ok := s.Thresholds[t.Key]; ok {
			*t.Field(&o) = v.Value
		}
	}
	return o
}
