package chaos

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	corechaos "github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/upgrade"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// UpgradeOptions is `kubectl ray chaos upgrade`: flags bound to the runner's Settings.
type UpgradeOptions struct {
	f      *cmdutil.Factory
	s      upgrade.Settings
	output *cmdutil.OutputFlag
	yes    bool
}

// NewUpgradeCmd returns `kubectl ray chaos upgrade`; runF, when set, gets the completed and validated options instead of Run (flag tests).
func NewUpgradeCmd(f *cmdutil.Factory, runF func(*UpgradeOptions) error) *cobra.Command {
	o := &UpgradeOptions{f: f}
	cmd := &cobra.Command{
		ValidArgsFunction: f.CompleteRayNames(cmdutil.CompleteServices),
		Use:               "upgrade rayservice/NAME (--image IMAGE | --patch JSON)",
		Short:             "Upgrade a RayService (new image or patch) under a live availability probe and report what clients saw",
		Long: `Probes the RayService's serve Service (<name>-serve-svc, port 8000) at a constant rate through
one port-forward per ready endpoint, patches the RayService once the warm-up is healthy (--image sets
the image of the Ray container of the head and every worker group; --patch applies a JSON merge
patch), and follows KubeRay's zero-downtime upgrade: the pending cluster, its head Ready, its Serve
apps RUNNING, the switch of the active cluster, and the old cluster's deletion. The report has
head-kill's totals, per-endpoint table and SLO verdict, and the upgrade's steps.

A RayService with spec.upgradeStrategy.type NewClusterWithIncrementalUpgrade (on by default from
KubeRay v1.7.0) has no <name>-serve-svc: clients reach it through its Gateway <name>-gateway, whose
HTTPRoute weights the clusters. The probe then goes through the Gateway's data plane Service
(--gateway-service, or the one labelled gateway.networking.k8s.io/gateway-name=<name>-gateway,
port 80), the run refuses to start unless the Gateway and the HTTPRoute are ready (KubeRay moves
nothing otherwise), and the report adds each cluster's Serve capacity and traffic steps.

The upgrade is never reverted: the RayService keeps the patched spec. The probe and port-forwards
end with the run, at --timeout, or on Ctrl-C.

Exit codes: 0 the upgrade switched and the SLO held, 1 it did not switch within --timeout or the
SLO broke, 2 bad input, a patch the API server finds invalid or that changes nothing, or a failed
warm-up (nothing was changed), 3 API errors, 4 no RBAC permission, 5 the RayService or its serve
Service was not found, 6 not confirmed, 130 interrupted (the report of what was seen is printed
first).`,
		Example: `  # Move RayService demo to a new Ray image; fail if more than 10 requests fail
  kubectl ray chaos upgrade rayservice/demo --image rayproject/ray:2.47.0 --path /fruit --max-errors 10 --yes

  # Any change of spec.rayClusterConfig starts a new cluster
  kubectl ray chaos upgrade rayservice/demo --patch '{"spec":{"rayClusterConfig":{"rayVersion":"2.47.0"}}}' --yes

  # Show the patch and have the API server dry-run it; nothing is changed (-o json: the plan as JSON)
  kubectl ray chaos upgrade rayservice/demo --image rayproject/ray:2.47.0 --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.RunOptionsOr(o, cmd, args, runF) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.s.Image, "image", "", "Set this image on the Ray container (the first) of the head and of every worker group")
	fl.StringVar(&o.s.Patch, "patch", "", "Apply this JSON merge patch to the RayService instead, e.g. '{\"spec\":{\"rayClusterConfig\":{...}}}'")
	fl.IntVar(&o.s.Port, "port", 0, "The port to probe: the serve Service's (default 8000), or under an incremental upgrade the Gateway data plane Service's (default 80, the listener KubeRay gives the Gateway)")
	fl.StringVar(&o.s.GatewayService, "gateway-service", "", "Under NewClusterWithIncrementalUpgrade: the Service clients reach the RayService's Gateway through, NAMESPACE/NAME or NAME (default: the one labelled gateway.networking.k8s.io/gateway-name=<name>-gateway in the RayService's namespace)")
	fl.StringVar(&o.s.Path, "path", "", "Request path (and query), e.g. /fruit (default /)")
	fl.StringArrayVar(&o.s.Headers, "header", nil, "Request header K:V (repeatable)")
	fl.DurationVar(&o.s.Warmup, "warmup", 10*time.Second, "Probe this long before the patch; the RayService is patched only if every warm-up request succeeded")
	fl.DurationVar(&o.s.Timeout, "timeout", 10*time.Minute, "The longest the probe runs in all (warm-up, patch, and the wait for the switch and the old cluster's deletion)")
	addProbeFlags(fl, &o.s.ProbeSettings)
	fl.DurationVar(&o.s.RequestTimeout, "request-timeout", probe.DefaultTimeout, "Per-request timeout of the probe (on this command it replaces kubectl's --request-timeout for API calls)")
	o.output = cmdutil.AddOutputFlag(cmd, "text", "json")
	fl.Lookup("output").Usage = "Report format: text|json (with --dry-run, the plan)"
	fl.BoolVarP(&o.yes, "yes", "y", false, "Do not ask for confirmation")
	fl.BoolVar(&o.s.DryRun, "dry-run", false, "Print the patch and the plan and have the API server dry-run the patch; change nothing, send no request")
	return cmd
}

// Complete reads the argument, the namespace and which flags were given.
func (o *UpgradeOptions) Complete(cmd *cobra.Command, args []string) error {
	t, err := ray.ParseTarget(args[0], ray.KindRayService)
	if err != nil || t.Name == "" || t.Kind != ray.KindRayService {
		return exit.Usagef("cannot target %q: name a RayService as rayservice/NAME", args[0])
	}
	o.s.RayService = t.Name
	completeProbeFlags(cmd, &o.s.ProbeSettings)
	return inNamespace(o.f, &o.s.Namespace)
}

// Validate checks every flag before the API is touched: bad input changes nothing.
func (o *UpgradeOptions) Validate() error {
	if err := o.output.Validate(); err != nil {
		return err
	}
	return exitError(o.s.Validate(), flagOf)
}

// Run runs the upgrade, prints its report and maps the outcome to the exit code.
func (o *UpgradeOptions) Run(cmd *cobra.Command) error {
	return probedRun(o.f, cmd, probed[*upgrade.Plan, *upgrade.Report]{p: &o.s.ProbeSettings, output: o.output, yes: o.yes, undone: "not confirmed: nothing was changed",
		dryRun:   func(ctx context.Context, c *kube.Clients) (*upgrade.Plan, error) { return upgrade.DryRun(ctx, c, o.s) },
		planText: upgrade.WritePlanText,
		run: func(ctx context.Context, c *kube.Clients) (*upgrade.Report, corechaos.Outcome, error) {
			return upgrade.Run(ctx, c, o.s)
		},
		text: upgrade.WriteText})
}
