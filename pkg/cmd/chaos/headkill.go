package chaos

import (
	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/headkill"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// HeadKillOptions is `kubectl ray chaos head-kill`: flags bound to the runner's Settings
// (headkill_run.go runs it and maps the outcome to an exit code).
type HeadKillOptions struct {
	f *cmdutil.Factory
	s headkill.Settings

	output     *cmdutil.OutputFlag
	reportHTML string
	yes        bool
}

// NewHeadKillCmd returns `kubectl ray chaos head-kill`; runF, when set, gets the completed and validated options instead of Run (flag tests).
func NewHeadKillCmd(f *cmdutil.Factory, runF func(*HeadKillOptions) error) *cobra.Command {
	o := &HeadKillOptions{f: f}
	cmd := &cobra.Command{
		ValidArgsFunction: f.CompleteRayNames(cmdutil.CompleteClusters | cmdutil.CompleteServices),
		Use:               "head-kill (RAYCLUSTER | rayservice/NAME)",
		Short:             "Kill a Ray head under a live availability probe and report every failed request",
		Long: `Probes the cluster's serving endpoint at a constant rate (open loop: a slow answer never delays
the next request), kills the head pod once the warm-up is healthy, and keeps probing while it
watches the pods, the RayCluster and the RayService. The report counts every request by status and
by the pod that served it, times the error window and the recovery, and checks the SLO.

What is probed: --target URL, or --service NAME --port N (for rayservice/NAME the default is its
serve Service <name>-serve-svc on port 8000). A Service is reached through one port-forward per
ready endpoint pod (through the API server, as kubectl port-forward), spread round-robin, and the
set follows the Service's EndpointSlices while the test runs.

Exit codes: 0 the SLO held, 1 it broke (or --until-recovered timed out), 2 bad input or a failed
warm-up (nothing was killed), 3 API errors and an eviction refused by a PodDisruptionBudget, 4 no
RBAC permission (the verb and resource are named), 5 the cluster, RayService, Service, head or
ready endpoints were not found, 6 not confirmed, 130 interrupted (the report of what was seen is
printed first).`,
		Example: `  # Kill the head of RayService demo while probing its serve Service; fail if more than 10 requests fail
  kubectl ray chaos head-kill rayservice/demo --rate 50/s --warmup 10s --after 60s --max-errors 10 --yes

  # Probe a URL, stop once recovered, write a JUnit file for CI and an HTML page
  kubectl ray chaos head-kill demo --target http://serve.example:8000 --path /healthz \
    --until-recovered --timeout 5m --min-availability 99 -o junit --report-html head-kill.html --yes

  # Show what would happen: nothing is killed and no request is sent (-o json: the plan as JSON)
  kubectl ray chaos head-kill rayservice/demo --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.RunOptionsOr(o, cmd, args, runF) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.s.Mode, "mode", string(kube.KillDelete), "How to kill the head: delete (its grace period), force (grace period 0) or evict (Eviction API; PodDisruptionBudgets apply)")
	_ = cmd.RegisterFlagCompletionFunc("mode", fixed("delete", "force", "evict"))
	bindAim(fl, &o.s.Aim, &o.s.ProbeSettings, aimWords{serviceDefault: "rayservice/NAME", step: "the kill", done: "the head is killed",
		untilRecovered: "Probe after the kill until the new head is Ready, the endpoints are back and no request failed for 1s, at most --timeout",
		timeout:        "With --until-recovered: the longest the probe runs after the kill"})
	o.output = cmdutil.AddOutputFlag(cmd, "text", "json", "junit")
	fl.Lookup("output").Usage = "Report format: text|json|junit (with --dry-run, the plan: text|json)"
	fl.StringVar(&o.reportHTML, "report-html", "", "Also write the report as one self-contained HTML page to this file")
	fl.BoolVarP(&o.yes, "yes", "y", false, "Do not ask for confirmation")
	fl.BoolVar(&o.s.DryRun, "dry-run", false, "Print what would be done and have the API server dry-run the kill; kill nothing, send no request")
	return cmd
}

// Complete reads the argument, the namespace and which flags were given.
func (o *HeadKillOptions) Complete(cmd *cobra.Command, args []string) error {
	var err error
	if o.s.Cluster, o.s.RayService, err = clusterOrService(args[0]); err != nil {
		return err
	}
	completeAim(cmd, &o.s.Aim, &o.s.ProbeSettings)
	return inNamespace(o.f, &o.s.Namespace)
}
