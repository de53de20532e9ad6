// Package doctor is `kubectl ray doctor`: read the cluster once (pkg/load, through pkg/kube), run
// diagnose's rules, print the findings (pkg/doctorprint). All judgement is in pkg/diagnose.
package doctor

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/doctorprint"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/flagname"
	"github.com/kubectl-ray/kubectl-ray/pkg/gc"
	"github.com/kubectl-ray/kubectl-ray/pkg/load"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Options for `kubectl ray doctor`.
type Options struct {
	f             *cmdutil.Factory
	output        *cmdutil.OutputFlag
	allNamespaces bool
	selector      string
	failOn        string
	minSeverity   string
	watch         bool
	ray           rayFlags
	files         fileFlags
	risks         bool
	from          string // --from: a bundle to check instead of the cluster

	namespace string // "" with -A
	target    *diagnose.Target
	acc       acceptance
}

const example = `  # Check every RayCluster in the current namespace
  kubectl ray doctor

  # Check one cluster, or the clusters of a RayService or RayJob
  kubectl ray doctor raycluster/my-cluster -n ml
  kubectl ray doctor rayservice/my-service -n ml

  # Check everything, fail a CI step on warnings too, and keep a JUnit report
  kubectl ray doctor -A --fail-on warning -o junit > doctor.xml

  # Ask Ray too: every head's dashboard (GCS, node table, version, Serve applications)
  kubectl ray doctor -A --ray

  # Stay running: print the findings now, then each one that appears or clears
  kubectl ray doctor -A --watch

  # Check manifests before they are applied: files, directories (-R) or what helm template prints
  kubectl ray doctor -f ray-cluster.yaml
  helm template ./chart | kubectl ray doctor -f - --offline -o junit

  # Check a bundle someone sent (kubectl ray bundle's archive), offline
  kubectl ray doctor --from ray-bundle.tar.gz`

// NewCmd returns `kubectl ray doctor`; runF, when set, gets the completed and validated options
// instead of Run (tests of the flags).
func NewCmd(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{f: f}
	cmd := &cobra.Command{
		Use:   "doctor [NAME | raycluster/NAME | rayservice/NAME | rayjob/NAME | raycronjob/NAME]",
		Short: "Find broken Ray heads, explain why, and say how to fix them",
		Long: `doctor reads RayClusters and the RayServices and RayJobs that own them, their pods, the nodes
those pods run on, the serve Services and their EndpointSlices, and the KubeRay operator, with one
LIST per kind, and reports every rule that fires: evicted, terminated, stuck, pending or
crash-looping heads, missing or duplicate heads, stale status, node pressure, an absent or outdated
operator, workers that did not rejoin, failed, pending, crash-looping or missing workers (with the
API server's refusal when a quota or an admission webhook refuses the operator's pods), RayService
settings that cause 502s, RayService upgrades stuck on a pending cluster, serve Services that
route to nothing, and RayJobs that failed, wait in Initializing, or finished and still hold a
cluster. raycronjob/NAME checks a RayCronJob (KubeRay v1.7.0) and the RayJobs it made, with
their clusters. Each rule, what fires it,
what each KubeRay version does and the remedy: kubectl ray doctor explain RULE.

Ray's own view: with --ray, doctor also reads each head's dashboard (GETs only, through a
port-forward via the API server: RBAC create on pods/portforward) and compares it with the pods:
the GCS's health, Ray's node table (nodes Ray marked DEAD whose pods run, Ready pods Ray never
saw), the Ray version, and the Serve applications. Without --ray it does so only when one
cluster, RayService or RayJob is named: one port-forward costs a second or two, which a named
check can afford and a sweep of every cluster should choose (--ray), and --ray=false turns it
off. A dashboard that cannot be read is one warning that says why.

A bundle: --from FILE.tar.gz runs the rules on kubectl ray bundle's archive, offline, and gives the
findings doctor gave when the bundle was made.

Exit codes: 0 no finding at or above --fail-on; 1 one is; 2 usage; 3 API error or KubeRay not
installed; 4 forbidden; 5 the named object does not exist.`,
		Example:           example,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: f.CompleteRayNames(cmdutil.CompleteClusters | cmdutil.CompleteServices),
		RunE:              func(cmd *cobra.Command, args []string) error { return cmdutil.RunOptionsOr(o, cmd, args, runF) },
	}
	o.output = cmdutil.AddOutputFlag(cmd, doctorprint.Formats...)
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Check RayClusters in all namespaces")
	cmd.Flags().StringVarP(&o.selector, "selector", "l", "", "Check only RayClusters with these labels (e.g. team=ml,env!=dev)")
	cmd.Flags().StringVar(&o.failOn, "fail-on", "error", "Exit 1 when a finding has this severity or worse: error|warning|never")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"error", "warning", "never"}, cobra.ShellCompDirectiveNoFileComp
	})
	o.ray.addFlags(cmd)
	cmd.Flags().BoolVarP(&o.watch, "watch", "w", false, "Stay running and print findings as they appear and clear, as kubectl get -w (Ctrl-C ends it, exit 0)")
	o.acc.addFlags(cmd)
	o.files.addFlags(cmd)
	cmd.Flags().StringVar(&o.from, "from", "", "Check a bundle (kubectl ray bundle's FILE.tar.gz) instead of the cluster, offline: the findings doctor gave when the bundle was made")
	cmd.Flags().BoolVar(&o.risks, "risks", false, "Also report the risks in live clusters' specs (info: the head the kubelet evicts first, Serve through the head, ...), as doctor -f always does")
	addMinSeverity(cmd, o)
	cmd.AddCommand(newExplainCmd(f))
	return cmd
}

// Complete reads the namespace and the target, and records which flags were given.
func (o *Options) Complete(cmd *cobra.Command, args []string) error {
	o.ray.given = cmd.Flags().Changed(flagname.Ray)
	if err := o.acc.load(); err != nil {
		return err
	}
	o.acc.rules.Risks = o.risks
	if len(o.files.paths) > 0 {
		o.namespace = o.filesNamespace()
	} else if !o.allNamespaces && o.from == "" {
		ns, err := o.f.Namespace()
		if err != nil {
			return err
		}
		o.namespace = ns
	}
	if len(args) == 1 {
		t, err := ray.ParseTarget(args[0], ray.KindRayCluster, ray.KindRayService, ray.KindRayJob, ray.KindRayCronJob)
		if err != nil {
			return exit.Usagef("cannot check %q: name a raycluster/NAME, rayservice/NAME, rayjob/NAME or raycronjob/NAME", args[0])
		}
		o.target = &t
	}
	return nil
}

// Run reads the snapshot, diagnoses and prints.
func (o *Options) Run(cmd *cobra.Command) error {
	if len(o.files.paths) > 0 {
		return o.runFiles(cmd)
	}
	if o.from != "" {
		return o.runFrom()
	}
	c, err := o.f.Clients()
	if err != nil {
		return err
	}
	if o.watch {
		return o.runWatch(cmdutil.Context(cmd), c)
	}
	gc.Tune(gc.OneShot) // the fleet is read once: keep the heap near what it holds (docs/performance.md)
	s, err := load.FromAPI(cmd.Context(), c, load.Query{Namespace: o.namespace, Selector: o.selector, Now: o.f.Now(),
		Ray: o.ray.query(o.target), Reads: diagnose.Reads, ClustersListed: warmRedactor})
	if err != nil {
		return err
	}
	return o.diagnose(s)
}

// warmRedactorBelow is the fleet under which doctor loads the redactor's provider rules (some
// 19 MiB, 30 to 70 ms) while the pods are still being read, not once the report prints: below
// it the memory is of no concern and the load is a tenth of the run (1,000 RayClusters: 0.6 s);
// above it the snapshot is the run's peak of memory, and the rules load after it is gone
// (docs/performance.md).
const warmRedactorBelow = 2000

func warmRedactor(clusters int) {
	if clusters < warmRedactorBelow {
		redact.Warm()
	}
}

// diagnose runs the rules on s and prints the report: the live snapshot, or a bundle's.
func (o *Options) diagnose(s *state.Snapshot) error {
	if o.target != nil {
		if why := diagnose.Unlisted(s, *o.target); why != "" {
			return exit.Errorf(exit.Forbidden, "cannot check %s: %s", o.target, why)
		}
	}
	if o.target != nil && !diagnose.Has(s, *o.target) {
		return o.notFound()
	}
	r := diagnose.DiagnoseTarget(s, o.acc.rules, o.target)
	o.applyAcceptance(&r)
	o.shown(&r)
	for _, g := range r.Blind {
		fmt.Fprintf(o.f.IOStreams.ErrOut, "warning: doctor could not see %s, so the rules that need them did not run: %s\n", g.Resource, g.Reason)
	}
	if err := o.output.Print(o.f.IOStreams.Out, o.report(&r)); err != nil {
		return err
	}
	if t := o.threshold(); t != "" && r.Worst().Rank() >= t.Rank() {
		return exit.Silent{Code: exit.CheckFailed}
	}
	return nil
}

// report is r with what doctor was asked, for its writer.
func (o *Options) report(r *diagnose.Report) doctorprint.Report {
	w := doctorprint.Report{Report: r, Namespace: o.namespace, Selector: o.selector, Target: o.target, FailOn: o.failOn,
		Threshold: o.threshold(), Acceptance: o.acc.status, Color: o.f.Color(), Width: o.f.TerminalWidth()}
	if ff := &o.files; ff.set != nil {
		w.Files = &doctorprint.Files{Set: ff.set, Online: ff.online, OfflineWhy: ff.offlineWhy}
	}
	return w
}

func (o *Options) notFound() error {
	kinds := []string{string(o.target.Kind)}
	if o.target.Kind == "" {
		kinds = []string{"RayCluster", "RayService", "RayJob"}
	}
	return cmdutil.NotFound(o.target.Name, o.namespace, o.selector, kinds...)
}
