package repair

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Observer hears what a Watchdog sees and does, so it can be counted (pkg/metrics exports it to
// Prometheus). Calls come from the watchdog's workers concurrently; implementations must be safe
// for that and must not block.
type Observer interface {
	// Outcome: one action was carried out (deleted, dry-run, changed, gone or failed).
	Outcome(o Outcome)
	// Refused: a finding heal will not act on, heard once per finding and object.
	Refused(sk Skip)
	// BackedOff: heal stays out of a head recreate loop (kuberay #4272), heard once per head.
	BackedOff(sk Skip)
	// Broken: the cluster's heads heal plans to act on now (waiting for MinAge included), by
	// rule; nil when the cluster has none or is gone. It replaces what was said before for key.
	Broken(key types.NamespacedName, byRule map[string]int)
	// SeenToDelete: from the first time a head was planned to its delete being accepted.
	SeenToDelete(rule string, d time.Duration)
	// Replaced: from a head's delete to a new head of the cluster being Running and Ready, as
	// the watchdog's caches show it.
	Replaced(rule string, d time.Duration)
	// Beat: the workers took an item from the queue and finished it; a watchdog whose beats
	// stop while they are due is wedged.
	Beat(at time.Time)
}

// NopObserver hears nothing.
type NopObserver struct{}

func (NopObserver) Outcome(Outcome)                             {}
func (NopObserver) Refused(Skip)                                {}
func (NopObserver) BackedOff(Skip)                              {}
func (NopObserver) Broken(types.NamespacedName, map[string]int) {}
func (NopObserver) SeenToDelete(string, time.Duration)          {}
func (NopObserver) Replaced(string, time.Duration)              {}
func (NopObserver) Beat(time.Time)                              {}
