package follow

import (
	"context"
	"io"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// Set is the streams of one run, followed together with a clock until the run is done.
type Set struct {
	// Required is the stream the run cannot go on without: when it cannot be resumed, Until ends
	// with the error.
	Required *Stream
	// Optional streams are each dropped, with one warning line on Warn, when they cannot be
	// resumed; a nil one is none.
	Optional []*Stream
	// Lines, when set, carries what a follower of a container's log read; OnLine hears each.
	Lines  <-chan string
	OnLine func(line string)
	// Tick is called every TickEvery while nothing else arrives: the run's clock, for a timeline
	// that moves on by itself (a grace period ending).
	Tick      func()
	TickEvery time.Duration
	Warn      io.Writer
}

// Stop ends every stream.
func (set *Set) Stop() {
	set.Required.Stop()
	for _, s := range set.Optional {
		s.Stop()
	}
}

// Until follows the streams until done() or ctx ends (the caller's timeout: no error, the caller
// judges what was seen), calling after once after each event or tick. What the streams had
// already delivered when done() turned true is taken too (a bystander evicted in the same second
// as the target, say). The error is the Required stream's that could not be resumed.
func (set *Set) Until(ctx context.Context, done func() bool, after func()) error {
	every := set.TickEvery
	if every <= 0 {
		every = 250 * time.Millisecond
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	after()
	for !done() {
		_, err := set.next(ctx, tick.C)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		after()
	}
	for took, err := set.next(ctx, nil); took && err == nil; took, err = set.next(ctx, nil) {
	}
	after()
	return nil
}

// next takes one thing: an event of any stream, a line, or, with tick, a tick or the end of ctx,
// waiting for one. Without tick it takes only what was already delivered, and took says whether
// there was something (a stream the server ended is then left for later).
func (set *Set) next(ctx context.Context, tick <-chan time.Time) (took bool, err error) {
	streams := make([]*Stream, 0, 1+len(set.Optional))
	cases := make([]reflect.SelectCase, 0, 4+len(set.Optional))
	recv := func(ch any) {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
	}
	for _, s := range append([]*Stream{set.Required}, set.Optional...) {
		if s != nil {
			streams = append(streams, s)
			recv(s.w.ResultChan())
		}
	}
	linesAt, tickAt := -1, -1
	if set.Lines != nil {
		linesAt = len(cases)
		recv(set.Lines)
	}
	if tick != nil {
		tickAt = len(cases)
		recv(tick)
		recv(ctx.Done())
	} else {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectDefault})
	}
	i, v, ok := reflect.Select(cases)
	switch {
	case i < len(streams):
		if !ok && tick == nil {
			return false, nil
		}
		var ev watch.Event
		if ok {
			ev = v.Interface().(watch.Event)
		}
		return true, set.take(ctx, streams[i], ev, ok)
	case i == linesAt:
		if !ok {
			set.Lines = nil
		} else if set.OnLine != nil {
			set.OnLine(v.String())
		}
		return true, nil
	case i == tickAt:
		if set.Tick != nil {
			set.Tick()
		}
	}
	return false, nil
}

// take hands an event to s, resuming s when the server ended it. The Required stream failing to
// resume is the error; an optional one is dropped with a warning.
func (set *Set) take(ctx context.Context, s *Stream, ev watch.Event, ok bool) error {
	err := s.take(ctx, ev, ok)
	if err == nil || s == set.Required {
		return err
	}
	if ctx.Err() == nil {
		Warn(set.Warn, "%s; %s", err, s.What)
	}
	for i := range set.Optional {
		if set.Optional[i] == s {
			set.Optional[i] = nil
		}
	}
	return nil
}
