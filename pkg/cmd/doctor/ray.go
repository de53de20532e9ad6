package doctor

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/flagname"
	"github.com/kubectl-ray/kubectl-ray/pkg/load"
)

// rayFlags are doctor's --ray flags: whether to read Ray's own view, and its bounds.
type rayFlags struct {
	on bool
	// given: --ray was on the command line, either way (Complete records it).
	given    bool
	timeout  time.Duration
	deadline time.Duration
	parallel int
}

func (r *rayFlags) addFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&r.on, flagname.Ray, false, "Also read each head's Ray dashboard through a port-forward (GCS, nodes, version, Serve apps); the default reads it only for a named cluster, RayService or RayJob; --ray=false never")
	fl.DurationVar(&r.timeout, flagname.RayTimeout, load.DefaultRayTimeout, "With Ray's view: the longest one cluster's port-forward and dashboard reads may take")
	fl.IntVar(&r.parallel, "ray-parallel", load.DefaultRayParallel, "With Ray's view: how many dashboards are read at once")
	fl.DurationVar(&r.deadline, flagname.RayDeadline, load.DefaultRayDeadline, "With Ray's view: the longest all dashboard reads may take together (clusters not read by then are reported unreachable)")
}

// asked reports whether doctor reads Ray's view for target: --ray asks for every cluster
// inspected, --ray=false for none; unset, a named target is asked about and a sweep is not.
func (r *rayFlags) asked(target *diagnose.Target) bool {
	if r.given {
		return r.on
	}
	return target != nil
}

func (r *rayFlags) validate(watch bool) error {
	switch {
	case r.timeout <= 0:
		return exit.Usagef("--ray-timeout must be positive, e.g. --ray-timeout 10s")
	case r.deadline <= 0:
		return exit.Usagef("--ray-deadline must be positive, e.g. --ray-deadline 60s")
	case r.parallel < 1:
		return exit.Usagef("--ray-parallel must be 1 or more, not %d", r.parallel)
	case watch && r.given && r.on:
		return exit.Usagef("--watch follows the Kubernetes objects only and does not read Ray's dashboards: run doctor --ray without --watch")
	}
	return nil
}

// query is the snapshot's RayQuery, nil when Ray is not asked.
func (r *rayFlags) query(target *diagnose.Target) *load.RayQuery {
	if !r.asked(target) {
		return nil
	}
	return &load.RayQuery{Target: target, Timeout: r.timeout, Deadline: r.deadline, Parallel: r.parallel}
}
