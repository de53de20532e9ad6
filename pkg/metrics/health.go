package metrics

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Role is what this watchdog replica is doing.
type Role string

const (
	RoleStarting Role = "starting" // informers not synced, or the election not yet decided
	RoleLeader   Role = "leader"   // acting (also: running without --leader-elect)
	RoleStandby  Role = "standby"  // following another replica's Lease
)

// Health answers the kubelet's probes for a watchdog replica.
//
// Ready (/readyz): the API server answers, and this replica is either the leader with its
// informers synced, or a standby. A replica that cannot reach the API server can neither heal
// nor take over, so it is not ready, leader or not.
//
// Live (/healthz): fails only when the watchdog is wedged: it leads with synced caches, yet its
// workers have not finished a queue item (the heartbeat goes through the queue every
// HeartbeatEvery) for WedgedAfter. An API server outage is not a reason to restart the process:
// client-go's informers recover by themselves once it is back.
type Health struct {
	HeartbeatEvery time.Duration
	WedgedAfter    time.Duration
	Now            func() time.Time

	mu       sync.Mutex
	role     Role
	synced   bool
	lastBeat time.Time
	apiErr   error // the last API server check's error; nil when it answered
	apiSeen  bool  // an API server check has completed

	onReady func(bool)
	onRole  func(Role)
}

// NewHealth is a Health that expects a heartbeat every heartbeat, and calls the watchdog wedged
// after wedgedAfter without one.
func NewHealth(heartbeat, wedgedAfter time.Duration) *Health {
	return &Health{HeartbeatEvery: heartbeat, WedgedAfter: wedgedAfter, Now: time.Now, role: RoleStarting}
}

// SetRole records a change of role. A new term starts with caches not yet synced.
func (h *Health) SetRole(r Role) {
	h.mu.Lock()
	h.role = r
	if r != RoleLeader {
		h.synced = false
	}
	cb := h.onRole
	h.mu.Unlock()
	if cb != nil {
		cb(r)
	}
	h.publish()
}

// Synced records that the informers have listed everything once, in this term.
func (h *Health) Synced() {
	h.mu.Lock()
	h.synced = true
	h.lastBeat = h.Now()
	h.mu.Unlock()
	h.publish()
}

// Beat records that the workers finished a queue item.
func (h *Health) Beat(at time.Time) {
	h.mu.Lock()
	if at.After(h.lastBeat) {
		h.lastBeat = at
	}
	h.mu.Unlock()
}

// APIChecked records the outcome of an API server check.
func (h *Health) APIChecked(err error) {
	h.mu.Lock()
	h.apiErr, h.apiSeen = err, true
	h.mu.Unlock()
	h.publish()
}

// Ready is nil when the replica is ready, else why not.
func (h *Health) Ready() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case !h.apiSeen:
		return fmt.Errorf("the API server has not been checked yet")
	case h.apiErr != nil:
		return fmt.Errorf("the API server does not answer: %v", h.apiErr)
	case h.role == RoleStandby:
		return nil
	case h.role == RoleLeader && h.synced:
		return nil
	case h.role == RoleLeader:
		return fmt.Errorf("leading, but the informers have not synced yet")
	}
	return fmt.Errorf("starting: no leader decided and no informers synced yet")
}

// Live is nil unless the watchdog is wedged.
func (h *Health) Live() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.role != RoleLeader || !h.synced || h.WedgedAfter <= 0 {
		return nil
	}
	if since := h.Now().Sub(h.lastBeat); since > h.WedgedAfter {
		return fmt.Errorf("wedged: the watchdog's workers have finished nothing for %s (a heartbeat is due every %s)",
			since.Round(time.Second), h.HeartbeatEvery)
	}
	return nil
}

func (h *Health) publish() {
	if h.onReady != nil {
		h.onReady(h.Ready() == nil)
	}
}

// CheckAPI calls check every period until ctx ends, recording each outcome; failed checks are
// also given to failed (a metric), when set.
func (h *Health) CheckAPI(ctx context.Context, period time.Duration, check func(context.Context) error, failed func()) {
	for {
		cctx, cancel := context.WithTimeout(ctx, period)
		err := check(cctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil && failed != nil {
			failed()
		}
		h.APIChecked(err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
	}
}

// probe serves one probe: 200 "ok", or 503 with the reason.
func probe(check func() error) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if err := check(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, err)
			return
		}
		fmt.Fprintln(w, "ok")
	}
}
