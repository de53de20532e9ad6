package watchdog

import (
	"context"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/metrics"
	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
)

// Probe timings of the watchdog. The heartbeat goes through the work queue every
// heartbeatEvery; liveness fails after wedgedAfter without one (several missed beats, and
// longer than a delete's client timeout, so one slow API call does not restart the process).
// The API server is checked every apiCheckEvery for readiness.
var (
	heartbeatEvery = 10 * time.Second
	wedgedAfter    = 60 * time.Second
	apiCheckEvery  = 5 * time.Second
)

// watchMetrics is the watchdog's metrics and probes, or nothing without Config.MetricsAddr.
type watchMetrics struct {
	m *metrics.Watchdog
}

// startMetrics serves /metrics, /healthz and /readyz on addr and starts the API server check,
// until ctx ends. A port that cannot be bound fails the start, before any watching.
func startMetrics(ctx context.Context, c *kube.Clients, addr string, log *repair.Logger) (*watchMetrics, error) {
	if addr == "" {
		return &watchMetrics{}, nil
	}
	h := metrics.NewHealth(heartbeatEvery, wedgedAfter)
	m := metrics.NewWatchdog(h)
	bound, done, err := metrics.Serve(ctx, addr, m)
	if err != nil {
		return nil, fault.Errorf(fault.Invalid, "%v; pass %s with a free host:port", err, SetMetricsAddr)
	}
	go func() {
		if err := <-done; err != nil {
			log.Line("error", "the metrics server stopped", "error", err.Error())
		}
	}()
	go h.CheckAPI(ctx, apiCheckEvery, c.Ping, m.PingError)
	log.Line("info", "serving metrics and probes", "address", bound, "paths", "/metrics /healthz /readyz")
	return &watchMetrics{m: m}, nil
}

// observer is what the Watchdog reports to.
func (w *watchMetrics) observer() repair.Observer {
	if w.m == nil {
		return repair.NopObserver{}
	}
	return w.m
}

func (w *watchMetrics) heartbeat() time.Duration {
	if w.m == nil {
		return 0
	}
	return heartbeatEvery
}

func (w *watchMetrics) role(r metrics.Role) {
	if w.m != nil {
		w.m.Health.SetRole(r)
	}
}

func (w *watchMetrics) synced() {
	if w.m != nil {
		w.m.Health.Synced()
	}
}

func (w *watchMetrics) watchError(resource string) {
	if w.m != nil {
		w.m.WatchError(resource)
	}
}

func (w *watchMetrics) eventError() {
	if w.m != nil {
		w.m.EventError()
	}
}
