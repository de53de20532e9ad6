// Package metrics exports what heal --watch does to Prometheus, and serves /metrics, /healthz
// and /readyz; it also renders doctor's findings in the text exposition format. Metric names
// are stable: alerts and dashboards refer to them (docs/heal.md lists them).
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
)

const namespace = "kubectl_ray_heal"

// Results the heals counter is labelled with besides the executor's own (deleted, dry-run,
// changed, gone, failed).
const (
	ResultRefused   = "refused"    // a finding heal will not act on (not healable)
	ResultBackedOff = "backed-off" // heal stays out of a loop it would join
)

// Watchdog is the watchdog's metrics. It implements repair.Observer. Labels are bounded: rule
// IDs, results, resources and roles, never pods or clusters.
type Watchdog struct {
	Registry *prometheus.Registry
	Health   *Health

	heals        *prometheus.CounterVec
	broken       *prometheus.GaugeVec
	seenToDelete *prometheus.HistogramVec
	deleteToRdy  *prometheus.HistogramVec
	leader       prometheus.Gauge
	ready        prometheus.Gauge
	apiErrors    *prometheus.CounterVec
	watchErrors  *prometheus.CounterVec

	mu sync.Mutex
	// byCluster is each cluster's heads still to heal, by rule; broken is their sum.
	byCluster map[types.NamespacedName]map[string]int
}

var _ repair.Observer = (*Watchdog)(nil)

// NewWatchdog registers the watchdog's metrics, with Go's and the process's collectors, in a
// registry of its own.
func NewWatchdog(h *Health) *Watchdog {
	reg := prometheus.NewRegistry()
	// Heal times are seconds to minutes: the MinAge grace, then the operator creating a pod
	// and the kubelet starting Ray.
	buckets := []float64{0.1, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 120, 300, 600}
	m := &Watchdog{
		Registry: reg,
		Health:   h,
		heals: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "heals_total",
			Help: "Heal decisions by doctor rule and result: deleted, dry-run, changed, gone, failed, refused, backed-off."},
			[]string{"rule", "result"}),
		broken: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "heads_needing_heal",
			Help: "Head pods the watchdog plans to delete now (waiting out --min-age included), by rule."},
			[]string{"rule"}),
		seenToDelete: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "seen_to_delete_seconds",
			Help: "From a head first seen needing a heal to its delete being accepted.", Buckets: buckets},
			[]string{"rule"}),
		deleteToRdy: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "delete_to_ready_seconds",
			Help: "From a head's delete to a new head of its RayCluster being Running and Ready, as the watchdog's caches show it.", Buckets: buckets},
			[]string{"rule"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "leader",
			Help: "1 while this replica acts (leader, or running without --leader-elect), 0 while it stands by."}),
		ready: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "ready",
			Help: "1 while /readyz answers ok."}),
		apiErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "api_errors_total",
			Help: "API requests of the watchdog that failed, by operation (delete, event, ping)."},
			[]string{"operation"}),
		watchErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "watch_errors_total",
			Help: "List or watch errors the informers retried after, by resource."},
			[]string{"resource"}),
		byCluster: map[types.NamespacedName]map[string]int{},
	}
	reg.MustRegister(m.heals, m.broken, m.seenToDelete, m.deleteToRdy, m.leader, m.ready, m.apiErrors, m.watchErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if h != nil {
		h.onReady = func(ok bool) { m.ready.Set(boolFloat(ok)) }
		h.onRole = func(r Role) { m.leader.Set(boolFloat(r == RoleLeader)) }
	}
	return m
}

// Outcome counts one action, and a failed delete as an API error.
func (m *Watchdog) Outcome(o repair.Outcome) {
	m.heals.WithLabelValues(o.Action.Rule, string(o.Result)).Inc()
	if o.Result == repair.Failed {
		m.apiErrors.WithLabelValues("delete").Inc()
	}
	if o.EventProblem != "" {
		m.apiErrors.WithLabelValues("event").Inc()
	}
}

// Refused counts a finding heal will not act on.
func (m *Watchdog) Refused(sk repair.Skip) { m.heals.WithLabelValues(sk.Rule, ResultRefused).Inc() }

// BackedOff counts a heal left out because the cluster is in a delete-and-recreate loop.
func (m *Watchdog) BackedOff(sk repair.Skip) { m.heals.WithLabelValues(sk.Rule, ResultBackedOff).Inc() }

// Broken replaces key's share of the heads needing a heal.
func (m *Watchdog) Broken(key types.NamespacedName, byRule map[string]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.byCluster[key]
	if len(byRule) == 0 {
		delete(m.byCluster, key)
	} else {
		cp := make(map[string]int, len(byRule))
		for r, n := range byRule {
			cp[r] = n
		}
		m.byCluster[key] = cp
	}
	for r, n := range old {
		m.broken.WithLabelValues(r).Sub(float64(n))
	}
	for r, n := range byRule {
		m.broken.WithLabelValues(r).Add(float64(n))
	}
}

// SeenToDelete observes the time from first seen to delete.
func (m *Watchdog) SeenToDelete(rule string, d time.Duration) {
	m.seenToDelete.WithLabelValues(rule).Observe(d.Seconds())
}

// Replaced observes the time from delete to a Ready replacement.
func (m *Watchdog) Replaced(rule string, d time.Duration) {
	m.deleteToRdy.WithLabelValues(rule).Observe(d.Seconds())
}

// Beat records that the watchdog's workers are turning.
func (m *Watchdog) Beat(at time.Time) {
	if m.Health != nil {
		m.Health.Beat(at)
	}
}

// WatchError counts an error an informer retried after.
func (m *Watchdog) WatchError(resource string) { m.watchErrors.WithLabelValues(resource).Inc() }

// EventError counts an Event the watchdog could not write (it writes them after the delete,
// off the heal path, so they are not part of the delete's Outcome).
func (m *Watchdog) EventError() { m.apiErrors.WithLabelValues("event").Inc() }

// PingError counts a failed API server health check.
func (m *Watchdog) PingError() { m.apiErrors.WithLabelValues("ping").Inc() }

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
