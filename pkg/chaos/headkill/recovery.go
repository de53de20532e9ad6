package headkill

import (
	"time"

	"k8s.io/utils/ptr"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
)

// recovery is when each step of the recovery was seen after the kill.
func recovery(tl *timeline.Timeline, kill timeline.Event, killed bool, relAt func(time.Time) float64) Recovery {
	var r Recovery
	if !killed {
		return r
	}
	r.OldHead = kill.Object
	at := func(k timeline.Kind) (*float64, timeline.Event) {
		if e, ok := tl.First(k, kill.At); ok {
			return ptr.To(relAt(e.At)), e
		}
		return nil, timeline.Event{}
	}
	r.OldHeadGoneMs, _ = at(timeline.OldHeadGone)
	var created timeline.Event
	r.NewHeadCreatedMs, created = at(timeline.NewHeadCreated)
	r.NewHead = created.Object
	r.NewHeadScheduledMs, _ = at(timeline.NewHeadScheduled)
	r.NewHeadRunningMs, _ = at(timeline.NewHeadRunning)
	r.NewHeadReadyMs, _ = at(timeline.NewHeadReady)
	readyAtKill, changed := false, false
	for _, e := range tl.Events() {
		if e.At.Before(kill.At) {
			if e.Kind == timeline.RayClusterState {
				readyAtKill = e.To == "ready"
			}
			continue
		}
		if e.Kind == timeline.RayClusterState {
			changed = true
		}
		if e.Kind == timeline.RayClusterState && e.To == "ready" && r.RayClusterReadyMs == nil {
			r.RayClusterReadyMs = ptr.To(relAt(e.At))
		}
		if e.Kind == timeline.RayServiceActiveCluster && e.From != e.To {
			if !r.ActiveClusterChanged {
				r.ActiveClusterFrom = e.From
			}
			r.ActiveClusterChanged = true
			r.ActiveClusterTo = e.To
		}
	}
	r.RayClusterStayedReady = readyAtKill && !changed
	if t, ok := tl.EndpointsBack(kill.At); ok {
		r.EndpointsBackMs = ptr.To(relAt(t))
	}
	return r
}
