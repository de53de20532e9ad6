package heal

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/metrics"
	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
)

// election is replaced by tests to shorten the Lease timings.
var election = kube.DefaultElection

// runWatch is the watchdog: informers feed the same Diagnose and Plan as a one-shot heal, one
// RayCluster at a time. SIGTERM or SIGINT stops it cleanly (and releases the Lease).
func (o *Options) runWatch(ctx context.Context) error {
	tuneGC()
	c, err := o.f.Clients()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	format := "logfmt"
	if o.output.Value == "json" {
		format = "json"
	}
	log := repair.NewLogger(o.f.IOStreams.Out, format, o.f.Now)
	kube.RouteClientLogs(log.Line)
	o.logExpired(log)
	wm, err := o.startMetrics(ctx, c, log)
	if err != nil {
		return err
	}
	if !o.leaderElect {
		wm.role(metrics.RoleLeader)
		return o.watchdog(ctx, c, log, wm)
	}
	if err := c.CheckLeaseNamespace(ctx, o.leaseNamespace); err != nil {
		return err
	}
	lease, err := c.WithOwnRateLimit(leaseQPS, leaseBurst)
	if err != nil {
		return err
	}
	id := identity()
	ctx, fail := context.WithCancelCause(ctx)
	var leading atomic.Bool
	err = lease.RunElected(ctx, o.leaseNamespace, id, election, func(lctx context.Context) {
		if err := o.watchdog(lctx, c, log, wm); err != nil && lctx.Err() == nil {
			fail(err) // a fatal error (RBAC) ends the process, leader or not
		}
	}, func(event, who string) {
		switch event {
		case "leading":
			leading.Store(true)
			wm.role(metrics.RoleLeader)
			log.Line("info", "became leader; acting", "lease", o.leaseNamespace+"/"+kube.LeaseName, "identity", who)
		case "stopped":
			wm.role(metrics.RoleStandby)
			switch {
			case !leading.Swap(false):
			case ctx.Err() != nil:
				// Shutting down (SIGTERM): the Lease was given up, so another replica takes
				// over at once.
				log.Line("info", "shutting down; stopped acting and gave up the Lease", "lease", o.leaseNamespace+"/"+kube.LeaseName, "identity", who)
			default:
				log.Line("warn", "lost leadership; stopped acting", "lease", o.leaseNamespace+"/"+kube.LeaseName, "identity", who)
			}
		case "following":
			wm.role(metrics.RoleStandby)
			log.Line("info", "following the leader; not acting", "lease", o.leaseNamespace+"/"+kube.LeaseName, "leader", who)
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

// watchdog runs the informers and the Watchdog until ctx ends or an error no retry can fix.
func (o *Options) watchdog(ctx context.Context, c *kube.Clients, log *repair.Logger, wm *watchMetrics) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rules := o.rules
	events, err := o.asyncEvents(c, log, wm)
	if err != nil {
		return err
	}
	defer events.Close(eventsGrace)
	wd := repair.NewWatchdog(repair.WatchdogConfig{
		Diagnose:  o.watchDiagnose,
		Recheck:   func(s *diagnose.Snapshot) (time.Time, bool) { return recheckAt(s, rules) },
		Exec:      &repair.Executor{Deleter: c, Events: events, DryRun: o.dryRun, Now: o.f.Now},
		Workers:   o.workers,
		Opts:      repair.Options{Force: o.force, StaleWorkers: o.staleWorkers, Name: exit.Flag},
		MinAge:    o.minAge,
		Now:       o.f.Now,
		Log:       log,
		Observer:  wm.observer(),
		Heartbeat: wm.heartbeat(),
	})
	// Nodes are cached only with --force: only force deletes need them, and without it the
	// watchdog needs no cluster-wide read of nodes.
	inf, err := c.NewClusterInformers(o.namespace, o.force, wd.Changed)
	if err != nil {
		return err
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
	scope := o.namespace
	if scope == "" {
		scope = "all namespaces"
	}
	log.Line("info", "watching", "scope", scope, "rayclusters", len(inf.Keys()), "minAge", o.minAge.String(),
		"dryRun", o.dryRun, "force", o.force)
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
func recheckAt(s *diagnose.Snapshot, rules diagnose.Options) (time.Time, bool) {
	a, okA := diagnose.TerminatingDeadline(s, rules)
	b, okB := diagnose.ReplaceDeadline(s, rules)
	switch {
	case okA && okB && b.Before(a), !okA:
		return b, okB
	}
	return a, okA
}
