package heal

import (
	"context"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/watchdog"
)

// election is replaced by tests to shorten the Lease timings.
var election = kube.DefaultElection

// runWatch runs the watchdog (pkg/watchdog) with what the flags say.
func (o *Options) runWatch(ctx context.Context) error {
	c, err := o.f.Clients()
	if err != nil {
		return err
	}
	// The watchdog's evidence goes to its log; to a directory only when one is asked for (its
	// default, relative to a container's working directory, would die with the pod).
	evidenceDir := ""
	if o.given.evidenceDir {
		evidenceDir = o.evidenceDir
	}
	format := "logfmt"
	if o.output.Value == cmdutil.FormatJSON {
		format = "json"
	}
	return watchdog.Run(ctx, c, watchdog.Config{
		Namespace:      o.namespace,
		Diagnose:       o.watchDiagnose,
		Rules:          o.rules,
		DryRun:         o.dryRun,
		Force:          o.force,
		StaleWorkers:   o.staleWorkers,
		Workers:        o.workers,
		MinAge:         o.minAge,
		LeaderElect:    o.leaderElect,
		LeaseNamespace: o.leaseNamespace,
		Election:       election,
		MetricsAddr:    o.metricsAddr,
		Out:            o.f.IOStreams.Out,
		Format:         format,
		Started:        o.logExpired,
		KeepEvidence:   !o.noEvidence,
		EvidenceDir:    evidenceDir,
		Name:           exit.Flag,
		Now:            o.f.Now,
	})
}
