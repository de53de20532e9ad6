package headkill

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/report"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// ProbeSettings are what every experiment run under the probe shares (head-kill, and chaos
// upgrade, which embeds them): the requests, the warm-up, the SLO, and the command's hooks.
type ProbeSettings struct {
	Path    string
	Method  string
	Data    string
	Headers []string // K:V
	Rate    string   // 50, 50/s or 600/m

	Warmup         time.Duration
	RequestTimeout time.Duration

	MaxErrors          int64
	MaxErrorsSet       bool
	MinAvailability    float64
	MinAvailabilitySet bool

	// DryRun: only plan, and have the API server dry-run the disruptive step (DryRun, not Run).
	DryRun bool
	// Progress is called every ProgressEvery with the probe's counters and the cluster's state.
	Progress      func(l probe.Live, state string)
	ProgressEvery time.Duration
	// Confirm is asked before the disruptive step; an error stops the run with nothing changed.
	Confirm chaos.Confirm
	// Interrupts wraps the context of the run itself (from the watches on): the command ends it on
	// Ctrl-C, so the report of what was seen is still built. Before that, Ctrl-C ends the process.
	Interrupts func(context.Context) (context.Context, context.CancelFunc)
	// Warn hears what the run can go on without (no doctor advice, a watch that ended).
	Warn io.Writer
	Now  func() time.Time

	config probe.Config // set by ValidateProbe
}

// Defaults fills the hooks a caller may leave nil.
func (p *ProbeSettings) Defaults() {
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Warn == nil {
		p.Warn = io.Discard
	}
}

// ValidateProbe checks the probe's settings, once the experiment checked its own: guarded is what
// a healthy warm-up guards ("the head is killed"), path the path to probe, and schedule the
// longest the probe may run, so its caps (rate × duration) hold for it.
func (p *ProbeSettings) ValidateProbe(guarded, path string, schedule time.Duration) error {
	rate, err := ParseRate(p.Rate)
	if err != nil {
		return err
	}
	switch {
	case p.Warmup <= 0:
		return invalid("%s must be positive (%s only after a healthy warm-up), e.g. %s 10s", SetWarmup, guarded, SetWarmup)
	case float64(p.Warmup)/float64(time.Second)*rate < 1:
		return invalid("%s %s at %s %s sends no request: lengthen the warm-up or raise the rate", SetWarmup, p.Warmup, SetRate, p.Rate)
	case p.RequestTimeout <= 0:
		return invalid("%s must be positive, e.g. %s 2s", SetRequestTimeout, SetRequestTimeout)
	case p.ProgressEvery <= 0:
		return invalid("%s must be positive", SetProgressEvery)
	case p.MaxErrorsSet && p.MaxErrors < 0:
		return invalid("%s must be 0 or more, not %d", SetMaxErrors, p.MaxErrors)
	case p.MinAvailabilitySet && (math.IsNaN(p.MinAvailability) || p.MinAvailability < 0 || p.MinAvailability > 100):
		return invalid("%s is a percentage from 0 to 100, not %v", SetMinAvailability, p.MinAvailability)
	}
	header := http.Header{}
	for i, h := range p.Headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			// The value is not echoed: a header is where tokens go.
			return invalid("%s number %d is not K:V, e.g. %s 'Content-Type: application/json'", SetHeader, i+1, SetHeader)
		}
		header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	p.config = probe.Config{Rate: rate, Method: strings.ToUpper(p.Method), Path: path, Header: header, Timeout: p.RequestTimeout}
	if p.Data != "" {
		p.config.Body = []byte(p.Data)
	}
	return p.config.Validate(schedule)
}

// Config is the probe's configuration, set by ValidateProbe.
func (p *ProbeSettings) Config() probe.Config { return p.config }

// SLO is what the run must hold.
func (p *ProbeSettings) SLO() report.SLO {
	var slo report.SLO
	if p.MaxErrorsSet {
		slo.MaxErrors = &p.MaxErrors
	}
	if p.MinAvailabilitySet {
		slo.MinAvailability = &p.MinAvailability
	}
	return slo
}

// PlanSLO is the SLO as a dry-run plan shows it.
func (p *ProbeSettings) PlanSLO() report.PlanSLO {
	slo := p.SLO()
	return report.PlanSLO{MaxErrors: slo.MaxErrors, MinAvailability: slo.MinAvailability}
}

// Ask asks Confirm before action, which happens while the probe runs against target.
func (p *ProbeSettings) Ask(action, target string) error {
	return p.Confirm.Ask(chaos.Confirmation{Action: action, While: fmt.Sprintf("probing %s at %v/s", target, p.config.Rate)})
}

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
