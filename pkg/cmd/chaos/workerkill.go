package chaos

import (
	"context"

	"github.com/spf13/cobra"

	corechaos "github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/workerkill"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// WorkerKillOptions is `kubectl ray chaos worker-kill`: flags bound to the runner's Settings.
type WorkerKillOptions struct {
	f *cmdutil.Factory
	s workerkill.Settings

	output *cmdutil.OutputFlag
	yes    bool
}

// NewWorkerKillCmd returns `kubectl ray chaos worker-kill`; runF, when set, gets the completed and validated options instead of Run (flag tests).
func NewWorkerKillCmd(f *cmdutil.Factory, runF func(*WorkerKillOptions) error) *cobra.Command {
	o := &WorkerKillOptions{f: f}
	cmd := &cobra.Command{
		ValidArgsFunction: f.CompleteRayNames(cmdutil.CompleteClusters | cmdutil.CompleteServices),
		Use:               "worker-kill (RAYCLUSTER | rayservice/NAME) (--count N | --percent P | --serve-replicas) [--group GROUP] [--seed S]",
		Short:             "Kill some workers of a group under a live availability probe and report what clients saw",
		Long: `Probes the serving endpoint at a constant rate, and once the warm-up is healthy kills --count
workers (or --percent of them) of one worker group at once, chosen at random with --seed (printed,
so the same seed picks the same workers again), each only while it is the pod that was read (uid
and resourceVersion preconditions). The report adds to the probe's totals, endpoints and timeline
each worker's kill, and where KubeRay recreated each one and when it was Ready.

--serve-replicas picks among the workers that Ray's own view says host Serve replicas: the head's
dashboard, read through a port-forward as doctor --ray reads it (GET /api/serve/applications/;
each replica's node IP is its pod's IP). Alone it kills every such worker of the group; with
--count or --percent, that many of them. The plan and the report name the replicas on each
worker killed, and the advice says when a deployment lost every replica it had.

What is probed: --target URL, or --service NAME --port N (for rayservice/NAME the default is its
serve Service on port 8000), through one port-forward per ready endpoint pod.

Exit codes: 0 the SLO held, 1 it broke (or --until-recovered timed out), 2 bad input (a --count
larger than the group's live workers) or a failed warm-up (nothing was killed), 3 API errors, an
eviction refused by a PodDisruptionBudget, and a dashboard that could not be read for
--serve-replicas, 4 no RBAC permission (the verb and resource are named), 5 the cluster, group,
RayService or Service was not found (or, with --serve-replicas, no running head, or no worker of
the group hosts a replica), 6 not confirmed, 130
interrupted (the report of what was seen is printed first).`,
		Example: `  # Kill one worker of RayService demo's only group while probing its serve Service
  kubectl ray chaos worker-kill rayservice/demo --count 1 --yes

  # Kill half of group gpu, the same ones as last time, until the cluster is back
  kubectl ray chaos worker-kill demo --group gpu --percent 50 --seed 42 --target http://serve.example:8000 --until-recovered --yes

  # Kill every worker of the group that hosts a Serve replica, as Ray's dashboard places them
  kubectl ray chaos worker-kill rayservice/demo --serve-replicas --yes

  # Show which workers seed 7 picks; nothing is killed
  kubectl ray chaos worker-kill rayservice/demo --count 2 --seed 7 --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.RunOptionsOr(o, cmd, args, runF) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.s.Group, "group", "", "The worker group (default: the cluster's only group)")
	fl.IntVar(&o.s.Count, "count", 0, "How many workers of the group to kill")
	fl.Float64Var(&o.s.Percent, "percent", 0, "Or this percentage of the group's live workers (rounded up, at least one)")
	fl.BoolVar(&o.s.ServeReplicas, "serve-replicas", false, "Pick among the workers Ray's view says host Serve replicas (all of them without --count or --percent)")
	fl.Int64Var(&o.s.Seed, "seed", 0, "Seed of the random choice (default: from the clock; the plan and the report print it)")
	fl.StringVar(&o.s.Mode, "mode", string(kube.KillDelete), "How to kill: delete (the pod's grace period), force (grace period 0) or evict (Eviction API; PodDisruptionBudgets apply)")
	_ = cmd.RegisterFlagCompletionFunc("mode", fixed("delete", "force", "evict"))
	bindAim(fl, &o.s.Aim, &o.s.ProbeSettings, aimWords{serviceDefault: "rayservice/NAME", step: "the kill", done: "the workers are killed",
		untilRecovered: "Probe after the kill until every killed worker is gone, the group has its Ready workers back, the endpoints are back and no request failed for 1s, at most --timeout",
		timeout:        "With --until-recovered: the longest the probe runs after the kill"})
	o.output = cmdutil.AddOutputFlag(cmd, "text", "json")
	fl.Lookup("output").Usage = "Report format: text|json (with --dry-run, the plan)"
	fl.BoolVarP(&o.yes, "yes", "y", false, "Do not ask for confirmation")
	fl.BoolVar(&o.s.DryRun, "dry-run", false, "Print which workers would be killed and have the API server dry-run each kill; kill nothing, send no request")
	return cmd
}

// Complete reads the argument, the namespace, the seed and which flags were given.
func (o *WorkerKillOptions) Complete(cmd *cobra.Command, args []string) error {
	var err error
	if o.s.Cluster, o.s.RayService, err = clusterOrService(args[0]); err != nil {
		return err
	}
	if !cmd.Flags().Changed("seed") {
		// Printed by the plan and the report, so the choice can be repeated.
		o.s.Seed = o.f.Now().UnixNano() % 1_000_000
	}
	completeAim(cmd, &o.s.Aim, &o.s.ProbeSettings)
	return inNamespace(o.f, &o.s.Namespace)
}

// Validate checks every flag before the API is touched: bad input kills nothing.
func (o *WorkerKillOptions) Validate() error {
	if err := o.output.Validate(); err != nil {
		return err
	}
	s := o.s
	return exitError(s.Validate(), flagOf)
}

// Run kills the workers under the probe, prints the report and maps the outcome to the exit code.
func (o *WorkerKillOptions) Run(cmd *cobra.Command) error {
	return probedRun(o.f, cmd, probed[*workerkill.Plan, *workerkill.Report]{p: &o.s.ProbeSettings, output: o.output, yes: o.yes, undone: "not confirmed: nothing was killed",
		dryRun: func(ctx context.Context, c *kube.Clients) (*workerkill.Plan, error) {
			return workerkill.DryRun(ctx, c, o.s)
		},
		planText: workerkill.WritePlanText,
		run: func(ctx context.Context, c *kube.Clients) (*workerkill.Report, corechaos.Outcome, error) {
			return workerkill.Run(ctx, c, o.s)
		},
		text: workerkill.WriteText})
}
