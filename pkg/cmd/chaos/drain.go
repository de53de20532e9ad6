package chaos

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	corechaos "github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/drain"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// DrainOptions is `kubectl ray chaos drain`: flags bound to the runner's Settings.
type DrainOptions struct {
	f *cmdutil.Factory
	s drain.Settings

	nodeOf string
	output *cmdutil.OutputFlag
	yes    bool
}

// NewDrainCmd returns `kubectl ray chaos drain`; runF, when set, gets the completed and validated options instead of Run (flag tests).
func NewDrainCmd(f *cmdutil.Factory, runF func(*DrainOptions) error) *cobra.Command {
	o := &DrainOptions{f: f}
	cmd := &cobra.Command{
		Use:   "drain (NODE | --node-of raycluster/NAME|rayservice/NAME [--role head|worker|any])",
		Short: "Drain a node as kubectl drain does, under a live availability probe, and report what clients saw",
		Long: `Probes the serving endpoint at a constant rate, and once the warm-up is healthy does what
kubectl drain does: cordons the node, then evicts its pods through the Eviction API, so
PodDisruptionBudgets apply (kubectl's own drain library picks the pods: DaemonSet and mirror pods
are skipped as kubectl skips them). A refused eviction (429) is reported with the budget's name
and asked again every 5s until --timeout; it is never bypassed (--disable-eviction deletes
instead, as kubectl does). The report adds to the probe's totals, endpoints and timeline each
pod's eviction and where KubeRay recreated each Ray pod, and when it was Ready.

When the run ends, for any reason (done, --timeout, Ctrl-C, an error), the node is uncordoned
unless --keep-cordoned is given; a node cordoned before the run stays cordoned.

What is probed: --target URL, or --service NAME --port N (for --node-of rayservice/NAME the default
is its serve Service on port 8000), through one port-forward per ready endpoint pod.

Exit codes: 0 the SLO held, 1 it broke (or --until-recovered timed out), 2 bad input, a node whose
pods kubectl drain would refuse, or a failed warm-up (nothing was cordoned), 3 API errors, 4 no RBAC
permission (the verb and resource are named), 5 the node, cluster, Service, or a Ray pod on the node
was not found, 6 not confirmed, 130 interrupted (the node is uncordoned, and the report of what was
seen is printed first).`,
		Example: `  # Drain the node of a worker of RayService demo while probing its serve Service
  kubectl ray chaos drain --node-of rayservice/demo --role worker --ignore-daemonsets --delete-emptydir-data --yes

  # Drain a named node until the cluster is back, at most 5 minutes; fail above 10 errors
  kubectl ray chaos drain node-7 -n ml --service demo-serve-svc --port 8000 --until-recovered --timeout 5m --max-errors 10 --yes

  # Show what would happen: the pods, the budgets over them and the API server's dry run of each eviction
  kubectl ray chaos drain --node-of rayservice/demo --role head --dry-run`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.RunOptionsOr(o, cmd, args, runF) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.nodeOf, "node-of", "", "Drain the node of a pod of this RayCluster (raycluster/NAME or NAME) or RayService (rayservice/NAME: its active cluster)")
	fl.StringVar(&o.s.Role, "role", drain.RoleAny, "With --node-of, whose node: head, worker or any (the head first)")
	_ = cmd.RegisterFlagCompletionFunc("role", fixed(drain.RoleHead, drain.RoleWorker, drain.RoleAny))
	_ = cmd.RegisterFlagCompletionFunc("node-of", f.CompleteRayNames(cmdutil.CompleteClusters|cmdutil.CompleteServices))
	fl.StringVar(&o.s.PodSelector, "pod-selector", "", "Only evict the node's pods that match this label selector, as kubectl drain --pod-selector")
	fl.BoolVar(&o.s.IgnoreDaemonSets, "ignore-daemonsets", false, "Skip DaemonSet-managed pods, as kubectl drain --ignore-daemonsets (without it, a node that runs one is refused)")
	fl.BoolVar(&o.s.DeleteEmptyDirData, "delete-emptydir-data", false, "Evict pods with emptyDir volumes (their data is lost), as kubectl drain; KubeRay's pods have one for /dev/shm")
	fl.BoolVar(&o.s.Force, "force", false, "Also evict pods that no controller manages, as kubectl drain --force")
	fl.Int64Var(&o.s.GracePeriod, "grace-period", -1, "Seconds each pod is given to terminate; -1 uses each pod's own terminationGracePeriodSeconds")
	fl.BoolVar(&o.s.DisableEviction, "disable-eviction", false, "Delete the pods instead of evicting them: PodDisruptionBudgets do NOT apply")
	fl.BoolVar(&o.s.KeepCordoned, "keep-cordoned", false, "Leave the node cordoned when the run ends")
	fl.BoolVar(&o.s.AnyPods, "any-pods", false, "Drain a node that runs no Ray pod")
	bindAim(fl, &o.s.Aim, &o.s.ProbeSettings, aimWords{serviceDefault: "--node-of rayservice/NAME", step: "the cordon", done: "the node is drained",
		untilRecovered: "Probe after the cordon until every pod is gone, every group has its Ready pods back, the endpoints are back and no request failed for 1s, at most --timeout",
		timeout:        "The longest the evictions are asked for (a refused one is retried until then); with --until-recovered, the longest the probe runs after the cordon"})
	o.output = cmdutil.AddOutputFlag(cmd, "text", "json")
	fl.Lookup("output").Usage = "Report format: text|json (with --dry-run, the plan)"
	fl.BoolVarP(&o.yes, "yes", "y", false, "Do not ask for confirmation")
	fl.BoolVar(&o.s.DryRun, "dry-run", false, "Print what would be done and have the API server dry-run the cordon and each eviction; change nothing, send no request")
	return cmd
}

// Complete reads the node or --node-of, the namespace and which flags were given.
func (o *DrainOptions) Complete(cmd *cobra.Command, args []string) error {
	if len(args) == 1 {
		o.s.Node = args[0]
	}
	if o.nodeOf != "" {
		t, err := ray.ParseTarget(o.nodeOf, ray.KindRayCluster, ray.KindRayService)
		if err != nil || t.Name == "" {
			return exit.Usagef("--node-of %q: name a RayCluster (raycluster/NAME) or a RayService (rayservice/NAME)", o.nodeOf)
		}
		o.s.NodeOf = t
	}
	completeAim(cmd, &o.s.Aim, &o.s.ProbeSettings)
	o.s.HeadStateRule = headStateRule
	return inNamespace(o.f, &o.s.Namespace)
}

// Validate checks every flag before the API is touched: bad input drains nothing.
func (o *DrainOptions) Validate() error {
	if err := o.output.Validate(); err != nil {
		return err
	}
	s := o.s
	return exitError(s.Validate(), flagOf)
}

// Run drains under the probe, prints the report and maps the outcome to the exit code.
func (o *DrainOptions) Run(cmd *cobra.Command) error {
	return probedRun(o.f, cmd, probed[*drain.Plan, *drain.Report]{p: &o.s.ProbeSettings, output: o.output, yes: o.yes, undone: "not confirmed: nothing was cordoned",
		dryRun:   func(ctx context.Context, c *kube.Clients) (*drain.Plan, error) { return drain.DryRun(ctx, c, o.s) },
		planText: func(w io.Writer, p *drain.Plan) error { return drain.WritePlanText(w, p) },
		run: func(ctx context.Context, c *kube.Clients) (*drain.Report, corechaos.Outcome, error) {
			return drain.Run(ctx, c, o.s)
		},
		text: drain.WriteText})
}
