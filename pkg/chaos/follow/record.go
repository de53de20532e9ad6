package follow

import (
	"slices"
	"sync"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
)

// Record is the part of a run's timeline every tracker keeps alike: the events in order, when the
// last one came, and the probed Service's ready endpoints as they come and go. Trackers
// (head-kill's, upgrade's, Losses) embed it and hold Mu while they read or change it: each watch
// calls them from its own goroutine.
type Record struct {
	Mu sync.Mutex
	tl timeline.Timeline
	// LastChange is when the last event was added.
	LastChange time.Time
	// ReadyEndpoints is the Service's ready endpoint pods as last heard; TracksEndpoints says
	// they were heard at all (a Service is probed, not a URL).
	ReadyEndpoints  []string
	TracksEndpoints bool
}

// Timeline returns the events so far.
func (r *Record) Timeline() *timeline.Timeline {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	return timeline.New(r.tl.Events()...)
}

// Add adds e; the caller holds Mu.
func (r *Record) Add(e timeline.Event) {
	r.tl.Add(e)
	r.LastChange = e.At
}

// Endpoints records which pods are behind the probed Service (the engine's EndpointsFollower):
// an EndpointRemoved for each that left, an EndpointAdded for each that came.
func (r *Record) Endpoints(names []string, at time.Time) {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	r.TracksEndpoints = true
	for _, n := range r.ReadyEndpoints {
		if !slices.Contains(names, n) {
			r.Add(timeline.Event{Kind: timeline.EndpointRemoved, At: at, Object: n})
		}
	}
	for _, n := range names {
		if !slices.Contains(r.ReadyEndpoints, n) {
			r.Add(timeline.Event{Kind: timeline.EndpointAdded, At: at, Object: n})
		}
	}
	r.ReadyEndpoints = slices.Clone(names)
}

// EndpointsBack says the Service has as many ready endpoints as want (those it had when the step
// began), or that no Service is probed; the caller holds Mu.
func (r *Record) EndpointsBack(want int) bool {
	return !r.TracksEndpoints || len(r.ReadyEndpoints) >= want
}
