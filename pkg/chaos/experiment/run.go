// Package experiment is the probe half of the engine every probed chaos experiment runs on: a
// warm-up under the probe, the experiment's disruptive step once the warm-up was healthy, the
// Service's endpoints behind the probe, recovery, and the result the experiment builds its report
// from. The watches are the follow half's (pkg/chaos/follow), heard by the experiment's tracker.
// head-kill's disruption is a pod delete or eviction, upgrade's a RayService patch; a new
// experiment supplies its own and imports no other. It is not an experiment itself: what every
// experiment is run with (experiment.Aim, experiment.ProbeSettings, experiment.Probed), as
// `kubectl ray chaos` offers each one.
package experiment

import (
	"context"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/follow"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
)

// RecoveredQuiet is how long the probe must see no new error, once the tracker says the cluster
// is back, before a run that waits for recovery stops: recovery is what clients see.
const RecoveredQuiet = time.Second

// Disruption is one disruptive step run under a probe.
type Disruption struct {
	Probe     probe.Config
	Endpoints probe.Endpoints
	Warmup    time.Duration
	// After is how long the probe runs after the step; with UntilRecovered, Timeout bounds it.
	After          time.Duration
	UntilRecovered bool
	Timeout        time.Duration
	// What says what the step does, for the tracker: head-kill's mode ("delete"), or upgrade's
	// change ("image rayproject/ray:2.41.0").
	What string
	// Step is the disruptive step (a head kill; a RayService patch). An error means nothing was
	// changed (the Tracker hears why).
	Step    func(ctx context.Context) error
	Tracker Tracker
	// Progress is called every ProgressEvery with the probe's counters and the tracker's State.
	Progress      func(l probe.Live, state string)
	ProgressEvery time.Duration
	Now           func() time.Time
}

// Tracker is the experiment's tracker: it hears the step (Disrupted, Refused), the watches
// (follow.Tracker) and the probed Service's endpoints (EndpointsFollower), and tells Run when the
// cluster is back.
type Tracker interface {
	follow.Tracker
	EndpointsFollower
	// Disrupted records that the step was requested (what says how), Refused that the API
	// refused it.
	Disrupted(what string, at time.Time)
	Refused(detail string, at time.Time)
	// Recovered: the cluster is back (or done); since is the time of the last change recorded.
	Recovered() (ok bool, since time.Time)
	// State is the cluster's part of the progress line.
	State() string
}

// Result is what happened to a Disruption.
type Result struct {
	Probe *probe.Result
	// WarmupFailed: the warm-up saw an error or no answer, so the step was not taken. Warmup
	// holds the counters when it was judged, or, once it failed, when the probe ended.
	WarmupFailed bool
	Warmup       probe.Live
	// Disrupted: the step succeeded. StepErr is why it did not.
	Disrupted bool
	StepErr   error
	// Recovered: UntilRecovered saw recovery before Timeout.
	Recovered bool
}

// StepSlack is room in the schedule for the step's API calls (a GET, then a DELETE, an eviction
// or a PATCH).
const StepSlack = 5 * time.Second

// scheduleLength is how long a probe schedule may run: the warm-up, the drain of its last
// requests (up to the request timeout), the step, and the time after it (After, or Timeout with
// UntilRecovered). Run ends the schedule at step + post once the step is done, so the time after
// it is what was asked, however long the drain and the step took.
func scheduleLength(warmup, requestTimeout, post time.Duration) time.Duration {
	if requestTimeout <= 0 {
		requestTimeout = probe.DefaultTimeout
	}
	return warmup + requestTimeout + drainMargin + StepSlack + post
}

// drainMargin is added to the request timeout when waiting for the warm-up's last requests.
const drainMargin = 100 * time.Millisecond

// post is how long the probe runs after the step.
func (p Disruption) post() time.Duration {
	if p.UntilRecovered {
		return p.Timeout
	}
	return p.After
}

// Duration is the probe's schedule length (scheduleLength).
func (p Disruption) Duration() time.Duration {
	return scheduleLength(p.Warmup, p.Probe.Timeout, p.post())
}

// Run probes for the warm-up, takes the step if the warm-up was healthy, and probes on until
// After ends or, with UntilRecovered, recovery or Timeout. Canceling ctx (Ctrl-C) ends it
// early with what was seen (Result.Interrupted).
func Run(ctx context.Context, p Disruption) *Result {
	if p.Now == nil {
		p.Now = time.Now
	}
	schedule := p.Duration()
	pr := probe.New(p.Probe, p.Endpoints)
	resc := make(chan *probe.Result, 1)
	go func() { resc <- pr.Run(ctx, schedule) }()
	out := &Result{}

	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		if p.Progress == nil || p.ProgressEvery <= 0 {
			return
		}
		t := time.NewTicker(p.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.Progress(pr.Live(), p.Tracker.State())
			case <-stopProgress:
				return
			}
		}
	}()
	finish := func() *Result {
		out.Probe = <-resc
		close(stopProgress)
		<-progressDone
		if p.Progress != nil {
			p.Progress(pr.Live(), p.Tracker.State())
		}
		return out
	}

	// The warm-up: until its last scheduled request has finished (or could have timed out).
	start := pr.Started()
	if !sleepUntil(ctx, start.Add(p.Warmup)) {
		return finish()
	}
	warm := pr.Live().Scheduled
	deadline := p.Now().Add(p.Probe.Timeout + drainMargin)
	if p.Probe.Timeout == 0 {
		deadline = p.Now().Add(probe.DefaultTimeout + drainMargin)
	}
	for pr.Live().Done < warm && p.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	if ctx.Err() != nil {
		return finish()
	}
	out.Warmup = pr.Live()
	if out.Warmup.OK == 0 || out.Warmup.Errors() > 0 {
		out.WarmupFailed = true
		pr.Stop()
		finish()
		// The final counts: a request due while the warm-up was judged is in the report too,
		// so the error's numbers and the report's agree.
		out.Warmup = pr.Live()
		return out
	}

	p.Tracker.Disrupted(p.What, p.Now())
	if err := p.Step(ctx); err != nil {
		out.StepErr = err
		p.Tracker.Refused(err.Error(), p.Now())
		pr.Stop()
		return finish()
	}
	out.Disrupted = true
	// The time after the step is counted from the step, not from the schedule's start.
	pr.EndAfter(time.Since(start) + p.post())
	if !p.UntilRecovered {
		return finish()
	}

	// Recovered: the tracker says the cluster is back (for head-kill: the new head is Ready and
	// the endpoints are back), and no request has failed for RecoveredQuiet since then.
	lastErrs, lastErrAt := pr.Live().Errors(), p.Now()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case res := <-resc:
			resc <- res
			return finish()
		case <-tick.C:
		}
		now := p.Now()
		if e := pr.Live().Errors(); e != lastErrs {
			lastErrs, lastErrAt = e, now
		}
		ok, since := p.Tracker.Recovered()
		if ok && now.Sub(since) >= RecoveredQuiet && now.Sub(lastErrAt) >= RecoveredQuiet {
			out.Recovered = true
			pr.Stop()
			return finish()
		}
	}
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
