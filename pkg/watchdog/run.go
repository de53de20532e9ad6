// Package watchdog assembles heal's watchdog against a cluster: the informers that feed
// repair.Loop, leader election on a Lease, the Events written off the heal path, the metrics
// and probes, and the garbage collector's tuning. The command only turns its flags into a Config.
package watchdog

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/gc"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/load"
	"github.com/kubectl-ray/kubectl-ray/pkg/metrics"
	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// The settings messages name; the command shows each as its flag.
const (
	SetMetricsAddr fault.Field = "metrics-bind-address"
)

// Config is one watchdog: what it watches, what it may do, and how it runs.
type Config struct {
	// Namespace is the scope; "" watches every namespace.
	Namespace string
	// Diagnose is doctor's diagnosis of one cluster's snapshot, as the command filters it (accept
	// files); Rules are doctor's thresholds, for the times a plan changes on its own.
	Diagnose func(*state.Snapshot) []diagnose.Finding
	Rules    diagnose.Options
	// DryRun sends the deletes as server-side dry runs; Force and StaleWorkers are repair.Options'.
	DryRun, Force, StaleWorkers bool
	// Workers is how many RayClusters are examined and healed at once (1 to MaxWorkers).
	Workers int
	// MinAge is how long a head must have needed healing before it is healed.
	MinAge time.Duration
	// LeaderElect: act only while holding the Lease kube.LeaseName in LeaseNamespace, with
	// Election's timings (zero: kube.DefaultElection).
	LeaderElect    bool
	LeaseNamespace string
	Election       kube.Election
	// MetricsAddr serves /metrics, /healthz and /readyz on host:port; off when empty.
	MetricsAddr string
	// Out hears the log, as Format ("logfmt" or "json"). Started is called with the logger
	// before anything is watched (the command logs its expired accept entries there).
	Out     io.Writer
	Format  string
	Started func(*repair.Logger)
	// KeepEvidence keeps each pod's evidence before its delete: in the log, and also
	// under EvidenceDir when that is set (a mounted volume; the pod's own disk dies with it).
	KeepEvidence bool
	EvidenceDir  string
	// Name shows a setting in a skip's why or an error (the command's flags).
	Name func(fault.Field) string
	Now  func() time.Time
}

// Run is the watchdog: informers feed the same Diagnose and Plan as a one-shot heal, one
// RayCluster at a time. SIGTERM or SIGINT stops it cleanly (and releases the Lease).
func Run(ctx context.Context, c *kube.Clients, cfg Config) error {
	gc.Tune(gc.Watchdog)
	if cfg.Election == (kube.Election{}) {
		cfg.Election = kube.DefaultElection
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := repair.NewLogger(cfg.Out, cfg.Format, cfg.Now)
	kube.RouteClientLogs(log.Line)
	if cfg.Started != nil {
		cfg.Started(log)
	}
	wm, err := startMetrics(ctx, c, cfg.MetricsAddr, log)
	if err != nil {
		return err
	}
	if !cfg.LeaderElect {
		wm.role(metrics.RoleLeader)
		return serve(ctx, c, cfg, log, wm)
	}
	if err := c.CheckLeaseNamespace(ctx, cfg.LeaseNamespace); err != nil {
		return err
	}
	lease, err := c.WithOwnRateLimit(leaseQPS, leaseBurst)
	if err != nil {
		return err
	}
	id := identity()
	ctx, fail := context.WithCancelCause(ctx)
	var leading atomic.Bool
	leaseRef := cfg.LeaseNamespace + "/" + kube.LeaseName
	err = lease.RunElected(ctx, cfg.LeaseNamespace, id, cfg.Election, func(lctx context.Context) {
		if err := serve(lctx, c, cfg, log, wm); err != nil && lctx.Err() == nil {
			fail(err) // a fatal error (RBAC) ends the process, leader or not
		}
	}, func(event, who string) {
		switch event {
		case "leading":
			leading.Store(true)
			wm.role(metrics.RoleLeader)
			log.Line("info", "became leader; acting", "lease", leaseRef, "identity", who)
		case "stopped":
			wm.role(metrics.RoleStandby)
			switch {
			case !leading.Swap(false):
			case ctx.Err() != nil:
				// Shutting down (SIGTERM): the Lease was given up, so another replica takes
				// over at once.
				log.Line("info", "shutting down; stopped acting and gave up the Lease", "lease", leaseRef, "identity", who)
			default:
				log.Line("warn", "lost leadership; stopped acting", "lease", leaseRef, "identity", who)
			}
		case "following":
			wm.role(metrics.RoleStandby)
			log.Line("info", "following the leader; not acting", "lease", leaseRef, "leader", who)
		}
	})
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// serve runs the informers and the repair.Loop until ctx ends or an error no retry can fix.
func serve(ctx context.Context, c *kube.Clients, cfg Config, log *repair.Logger, wm *watchMetrics) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rules := cfg.Rules
	events, err := asyncEvents(c, log, wm)
	if err != nil {
		return err
	}
	defer events.Close(eventsGrace)
	exec := &repair.Executor{Deleter: c, Events: events, DryRun: cfg.DryRun, Now: cfg.Now}
	var inf *load.Informers
	if cfg.KeepEvidence {
		exec.Keep, err = keeper(c, cfg, log, func(a repair.Action) *state.Snapshot {
			s, _ := inf.Snapshot(types.NamespacedName{Namespace: a.Cluster.Namespace, Name: a.Cluster.Name}, cfg.Now())
			return s
		})
		if err != nil {
			return err
		}
	}
	wd := repair.NewLoop(repair.LoopConfig{
		Diagnose:  cfg.Diagnose,
		Recheck:   func(s *state.Snapshot) (time.Time, bool) { return recheckAt(s, rules) },
		Exec:      exec,
		Workers:   cfg.Workers,
		Opts:      repair.Options{Force: cfg.Force, StaleWorkers: cfg.StaleWorkers, Name: cfg.Name},
		MinAge:    cfg.MinAge,
		Now:       cfg.Now,
		Log:       log,
		Observer:  wm.observer(),
		Heartbeat: wm.heartbeat(),
		// The first pass over every cluster decodes each one's pods and diagnoses it: garbage
		// once done. Give it back to the OS then, as after the sync below, so the resident size
		// starts from what the caches hold (docs/performance.md, the watchdog's memory).
		Settled: debug.FreeOSMemory,
	})
	// Nodes are cached only with Force: only force deletes need them, and without it the
	// watchdog needs no cluster-wide read of nodes.
	inf, err = load.NewInformers(c, cfg.Namespace, cfg.Force, diagnose.KeepEvent, wd.Changed)
	if err != nil {
		return err
	}
	if why := inf.EventsBlind(); why != "" {
		// Not fatal, as for doctor; but the back-off that keeps the watchdog from deleting a
		// head the operator recreates in a loop (kuberay #4272) is off, and that must be said.
		log.Line("warn", "Events not read; no back-off from a head recreate loop (head-recreate-loop)", "error", why)
	}
	inf.Warn = func(resource string, err error) {
		wm.watchError(resource)
		log.Line("warn", "watch interrupted; the informer lists again", "resource", resource, "error", err.Error())
	}
	wd.Cache = inf
	if err := inf.Start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	wm.synced()
	// The first LISTs' pages are garbage now; give their memory back to the OS at once rather than
	// over minutes, so the watchdog's resident size is what its caches hold.
	debug.FreeOSMemory()
	scope := cfg.Namespace
	if scope == "" {
		scope = "all namespaces"
	}
	log.Line("info", "watching", "scope", scope, "rayclusters", len(inf.Keys()), "minAge", cfg.MinAge.String(),
		"dryRun", cfg.DryRun, "force", cfg.Force)
	var fatal error
	go func() {
		select {
		case fatal = <-inf.Fatal():
			cancel()
		case <-ctx.Done():
		}
	}()
	wd.Run(ctx)
	return fatal
}

// recheckAt is the earliest time a cluster's plan can change with no object changing: a
// terminating head passing its margin, or the operator's grace for a terminal head ending.
func recheckAt(s *state.Snapshot, rules diagnose.Options) (time.Time, bool) {
	a, okA := diagnose.TerminatingDeadline(s, rules)
	b, okB := diagnose.ReplaceDeadline(s, rules)
	switch {
	case okA && okB && b.Before(a), !okA:
		return b, okB
	}
	return a, okA
}
