package experiment

import (
	"context"
	"io"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/follow"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// WatchStartTimeout bounds the start-up: the watches' first LISTs and the first port-forwards.
const WatchStartTimeout = 60 * time.Second

// session holds the contexts of one run under the probe: ctx is the run's (Interrupts end it on
// Ctrl-C), watchCtx the watches' and port-forwards', which outlive a Ctrl-C long enough for the
// report, and startCtx bounds the start-up (the watches' first LISTs and the first
// port-forwards). close ends them all.
type session struct {
	ctx, watchCtx, startCtx context.Context
	// undone is what is said of the disruptive step when the run ends before the probe started.
	undone string
	stops  []context.CancelFunc
}

// begin starts the session of a run; undone says that nothing was changed, e.g. "nothing was
// killed". The caller closes it.
func (p *ProbeSettings) begin(ctx context.Context, undone string) *session {
	s := &session{undone: undone}
	if p.Interrupts != nil {
		var stop context.CancelFunc
		ctx, stop = p.Interrupts(ctx)
		s.stops = append(s.stops, stop)
	}
	var stop context.CancelFunc
	s.watchCtx, stop = context.WithCancel(context.WithoutCancel(ctx))
	s.stops = append(s.stops, stop)
	s.startCtx, stop = context.WithTimeout(ctx, WatchStartTimeout)
	s.stops = append(s.stops, stop)
	s.ctx = ctx
	return s
}

// close ends the watches and the start-up, then the run's context.
func (s *session) close() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}

// watch starts the watches of w (the follow half), each event told to tr at now(); a watch's
// error mid-run goes to warn as a warning.
func (s *session) watch(c follow.Watcher, w kube.ClusterWatch, tr follow.Tracker, now func() time.Time, warn io.Writer) error {
	if err := follow.Cluster(s.watchCtx, s.startCtx, c, w, tr, now, warn); err != nil {
		return s.startError(err)
	}
	return nil
}

// startError explains why the run ended before the probe started; nothing was changed.
func (s *session) startError(err error) error {
	switch {
	case s.ctx.Err() != nil:
		return fault.Errorf(fault.Interrupted, "interrupted before the probe started: %s", s.undone)
	case s.startCtx.Err() != nil:
		return fault.Errorf(fault.API, "the watches and port-forwards did not start within %s (the API server is slow or failing): %s; check the cluster and run again", WatchStartTimeout, s.undone)
	}
	return err
}
