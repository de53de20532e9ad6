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
	// Kill kills the head; an error means nothing was killed (the Tracker hears why).
	Kill    func(ctx context.Context) error
	Tracker *Tracker
	// Progress is called every ProgressEvery with the probe's counters and the head's state.
	Progress      func(l probe.Live, head string)
	ProgressEvery time.Duration
	Now           func() time.Time
}

// Outcome is what happened.
type Outcome struct {
	Result *probe.Result
	// WarmupFailed: the warm-up saw an error or no answer, so nothing was killed. Warmup holds
	// the counters at its end.
	WarmupFailed bool
	Warmup       probe.Live
	// Killed: the kill call succeeded. KillErr is why it did not.
	Killed  bool
	KillErr error
	// Recovered: --until-recovered saw recovery before --timeout.
	Recovered bool
}

// Duration is how long the probe's schedule is: the warm-up plus the time after the kill.
func (p Plan) Duration() time.Duration {
	if p.UntilRecovered {
		return p.Warmup + p.Timeout
	}
	return p.Warmup + p.After
}

// Run probes for the warm-up, kills the head if the warm-up was healthy, and probes on until
// --after ends or, with --until-recovered, recovery or --timeout. Canceling ctx (Ctrl-C) ends it
// early with what was seen (Result.Interrupted).
func Run(ctx context.Context, p Plan) *Outcome {
	if p.Now == nil {
		p.Now = time.Now
	}
	pr := probe.New(p.Probe, p.Endpoints)
	resc := make(chan *probe.Result, 1)
	go func() { resc <- pr.Run(ctx, p.Duration()) }()
	out := &Outcome{}

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
	finish := func() *Outcome {
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
	deadline := p.Now().Add(p.Probe.Timeout + 100*time.Millisecond)
	if p.Probe.Timeout == 0 {
		deadline = p.Now().Add(probe.DefaultTimeout + 100*time.Millisecond)
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
		return finish()
	}

	p.Tracker.Kill(p.Mode, p.Now())
	if err := p.Kill(ctx); err != nil {
		out.KillErr = err
		p.Tracker.Refused(err.Error(), p.Now())
		pr.Stop()
		return finish()
	}
	out.Killed = true
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
