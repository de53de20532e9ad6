package experiment

import (
	"context"
	"fmt"
	"io"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// WatchStartTimeout bounds the start-up: the watches' first LISTs and the first port-forwards.
const WatchStartTimeout = 60 * time.Second

// WatchTracker hears the watches of a run: the pods, the RayClusters and the RayService.
type WatchTracker interface {
	Pod(p *corev1.Pod, deleted bool, at time.Time)
	RayCluster(rc *rayv1.RayCluster, deleted bool, at time.Time)
	RayService(rs *rayv1.RayService, at time.Time)
}

// Watcher starts the watches of a run (pkg/kube's Clients, or a fake).
type Watcher interface {
	RunClusterWatch(ctx, startup context.Context, w kube.ClusterWatch) (<-chan error, error)
}

// Session holds the contexts of one run under the probe: Ctx is the run's (Interrupts end it on
// Ctrl-C), WatchCtx the watches' and port-forwards', which outlive a Ctrl-C long enough for the
// report, and StartCtx bounds the start-up (the watches' first LISTs and the first
// port-forwards). Close ends them all.
type Session struct {
	Ctx, WatchCtx, StartCtx context.Context
	// undone is what is said of the disruptive step when the run ends before the probe started.
	undone string
	stops  []context.CancelFunc
}

// Begin starts the session of a run; undone says that nothing was changed, e.g. "nothing was
// killed". The caller closes it.
func (p *ProbeSettings) Begin(ctx context.Context, undone string) *Session {
	s := &Session{undone: undone}
	if p.Interrupts != nil {
		var stop context.CancelFunc
		ctx, stop = p.Interrupts(ctx)
		s.stops = append(s.stops, stop)
	}
	var stop context.CancelFunc
	s.WatchCtx, stop = context.WithCancel(context.WithoutCancel(ctx))
	s.stops = append(s.stops, stop)
	s.StartCtx, stop = context.WithTimeout(ctx, WatchStartTimeout)
	s.stops = append(s.stops, stop)
	s.Ctx = ctx
	return s
}

// Close ends the watches and the start-up, then the run's context.
func (s *Session) Close() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}

// Watch starts the watches of w, each event told to tr at now(); a watch's error mid-run goes to
// warn as a warning.
func (s *Session) Watch(c Watcher, w kube.ClusterWatch, tr WatchTracker, now func() time.Time, warn io.Writer) error {
	w.OnPod = func(p *corev1.Pod, deleted bool) { tr.Pod(p, deleted, now()) }
	w.OnRayCluster = func(rc *rayv1.RayCluster, deleted bool) { tr.RayCluster(rc, deleted, now()) }
	w.OnRayService = func(rs *rayv1.RayService, _ bool) { tr.RayService(rs, now()) }
	errs, err := c.RunClusterWatch(s.WatchCtx, s.StartCtx, w)
	if err != nil {
		return s.StartError(err)
	}
	go func() {
		for err := range errs {
			fmt.Fprintf(warn, "warning: %v; the timeline may miss events\n", err)
		}
	}()
	return nil
}

// StartError explains why the run ended before the probe started; nothing was changed.
func (s *Session) StartError(err error) error {
	switch {
	case s.Ctx.Err() != nil:
		return chaos.Errorf(chaos.Interrupted, "interrupted before the probe started: %s", s.undone)
	case s.StartCtx.Err() != nil:
		return chaos.Errorf(chaos.Failed, "the watches and port-forwards did not start within %s (the API server is slow or failing): %s; check the cluster and run again", WatchStartTimeout, s.undone)
	}
	return err
}
