package headkill

import (
	"context"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
)

// RecoveredQuiet is how long the probe must see no new error, after the new head is Ready and
// the endpoints are back, before --until-recovered stops it: recovery is what clients see.
const RecoveredQuiet = time.Second

// Plan is one head kill under a probe.
type Plan struct {
	Probe     probe.Config
	Endpoints probe.Endpoints
	Warmup    time.Duration
	// After is how long the probe runs after the kill; with UntilRecovered, Timeout bounds it.
	After          time.Duration
	UntilRecovered bool
	Timeout        time.Duration
	Mode           string
	// Kill is the disruptive step (the head kill; for an upgrade, the patch); an error means
	// nothing was changed (the Tracker hears why).
	Kill    func(ctx context.Context) error
	Tracker Follower
	// Progress is called every ProgressEvery with the probe's counters and the head's state.
	Progress      func(l probe.Live, head string)
	ProgressEvery time.Duration
	Now           func() time.Time
}

// Follower is what RunPlan asks of the watches' tracker: headkill's Tracker, or another
// experiment's (chaos upgrade) that runs its disruptive step under the same probe.
type Follower interface {
	// Kill records that the disruptive step was requested (mode says how), Refused that the API
	// refused it.
	Kill(mode string, at time.Time)
	Refused(detail string, at time.Time)
	// Recovered: the cluster is back (or done); since is the time of the last change recorded.
	Recovered() (ok bool, since time.Time)
	// State is the cluster's part of the progress line.
	State() string
}

// PlanResult is what happened to a Plan.
type PlanResult struct {
	Result *probe.Result
	// WarmupFailed: the warm-up saw an error or no answer, so nothing was killed. Warmup holds
	// the counters when it was judged, or, once it failed, when the probe ended.
	WarmupFailed bool
	Warmup       probe.Live
	// Killed: the kill call succeeded. KillErr is why it did not.
	Killed  bool
	KillErr error
	// Recovered: --until-recovered saw recovery before --timeout.
	Recovered bool
}

// KillSlack is room in the schedule for the kill's API calls (a GET and a DELETE or eviction).
const KillSlack = 5 * time.Second

// ScheduleLength is how long a head kill's probe schedule may run: the warm-up, the drain of its
// last requests (up to the request timeout), the kill, and the time after it (--after, or
// --timeout with --until-recovered). Run ends the schedule at kill + post once the kill is done,
// so the time after the kill is what was asked, however long the drain and the kill took.
func ScheduleLength(warmup, requestTimeout, post time.Duration) time.Duration {
	if requestTimeout <= 0 {
		requestTimeout = probe.DefaultTimeout
	}
	return warmup + requestTimeout + drainMargin + KillSlack + post
}

// drainMargin is added to the request timeout when waiting for the warm-up's last requests.
const drainMargin = 100 * time.Millisecond

// post is how long the probe runs after the kill.
func (p Plan) post() time.Duration {
	if p.UntilRecovered {
		return p.Timeout
	}
	return p.After
}

// Duration is the probe's schedule length (ScheduleLength).
func (p Plan) Duration() time.Duration {
	return ScheduleLength(p.Warmup, p.Probe.Timeout, p.post())
}

// RunPlan probes for the warm-up, kills the head if the warm-up was healthy, and probes on until
// --after ends or, with --until-recovered, recovery or --timeout. Canceling ctx (Ctrl-C) ends it
// early with what was seen (Result.Interrupted).
func RunPlan(ctx context.Context, p Plan) *PlanResult {
	if p.Now == nil {
		p.Now = time.Now
	}
	pr := probe.New(p.Probe, p.Endpoints)
	resc := make(chan *probe.Result, 1)
	go func() { resc <- pr.Run(ctx, p.Duration()) }()
	out := &PlanResult{}

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
	finish := func() *PlanResult {
		out.Result = <-resc
		close(stopProgress)
		<-progressDone
		if p.Progress != nil {
			p.Progress(pr.Live(), p.Tracker.State())
		}
		return out
	}

	// The warm-up: until its last scheduled request has finished (or could have timed out).
	start := waitStart(pr)
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

	p.Tracker.Kill(p.Mode, p.Now())
	if err := p.Kill(ctx); err != nil {
		out.KillErr = err
		p.Tracker.Refused(err.Error(), p.Now())
		pr.Stop()
		return finish()
	}
	out.Killed = true
	// The time after the kill is counted from the kill, not from the schedule's start.
	pr.EndAfter(time.Since(start) + p.post())
	if !p.UntilRecovered {
		return finish()
	}

	// Recovered: the new head is Ready, the endpoints are back, and no request has failed for
	// RecoveredQuiet since then.
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

// waitStart returns the probe's start once Run has set it.
func waitStart(pr *probe.Prober) time.Time {
	for {
		if l := pr.Live(); !l.Start.IsZero() {
			return l.Start
		}
		time.Sleep(time.Millisecond)
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
