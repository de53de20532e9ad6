// Package heal is `kubectl ray heal`: delete the Ray heads doctor finds broken in a way only a
// delete repairs, so the KubeRay operator creates new ones; once, or as a watchdog.
package heal

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/accept"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/evidence"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/flagname"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
	"github.com/kubectl-ray/kubectl-ray/pkg/watchdog"
)

// Options for `kubectl ray heal`.
type Options struct {
	f      *cmdutil.Factory
	output *cmdutil.OutputFlag

	name          string
	namespace     string // "" with -A
	allNamespaces bool
	dryRun        bool
	yes           bool
	force         bool
	staleWorkers  bool
	removeGCSFT   bool
	wait          bool
	timeout       time.Duration

	watch          bool
	minAge         time.Duration
	leaderElect    bool
	leaseNamespace string
	metricsAddr    string
	workers        int

	// evidenceDir and noEvidence: what heal keeps of a pod before it deletes it (docs/heal.md;
	// kuberay #1047: a deleted pod's logs are gone with it).
	evidenceDir string
	noEvidence  bool
	// snapshot is the last one plan read: its secrets go into the evidence's redactor.
	snapshot *state.Snapshot

	// given records which flags were on the command line (Complete), for Validate to judge.
	given given
	// rules are doctor's thresholds, from the same flags and accept files, so both agree.
	rules diagnose.Options

	accept          *accept.Flags
	acceptSet       *accept.Set
	includeAccepted bool
	warnedAccept    bool
}

// NewCmd returns `kubectl ray heal`; runF, when set, gets the completed and validated options
// instead of Run (tests of the flags).
func NewCmd(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{f: f, rules: diagnose.DefaultOptions()}
	cmd := &cobra.Command{
		Use: "heal [NAME | -n NAMESPACE | -A]",
		// NAME is a RayCluster, bare or as raycluster/NAME.
		ValidArgsFunction: f.CompleteRayNames(cmdutil.CompleteClusters),
		Short:             "Replace Ray heads that are evicted, terminated or stuck, by deleting them so KubeRay creates new ones",
		Long: `heal acts on doctor's findings where deleting the head pod is the repair and the KubeRay operator
will create the replacement: head-evicted, head-terminated, the terminal extra head of head-duplicate,
and, with --force, head-terminating-stuck on a node that is NotReady, unreachable or gone; with
--stale-workers, the workers of workers-stale. With --remove-gcs-ft-finalizer it also removes
KubeRay's Redis cleanup finalizer from RayClusters whose deletion it holds (gcs-ft-finalizer-stuck),
and says what that leaves behind in Redis. It backs off on a cluster whose head is recreated in a
loop (head-recreate-loop): another delete would only add a turn.
It never deletes a running pod, a pod that is not a Ray head, or a pod its RayCluster does not
control, and never creates pods: the operator owns the head's spec.

Every delete carries the UID and resourceVersion heal saw: a pod that changed in between is not
deleted, and is looked at once more. Each delete is recorded as an Event (reason RayHeadHealed) on
the RayCluster and the pod.`,
		Example: `  # See what would be done, change nothing
  kubectl ray heal -A --dry-run

  # Replace the broken head of one cluster and wait for the new one to be ready
  kubectl ray heal raycluster-kuberay -n default --yes

  # Run as a watchdog (see docs/deploy/watchdog.yaml to run it in-cluster)
  kubectl ray heal --watch -A --yes --leader-elect --lease-namespace ray-system`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.RunOptionsOr(o, cmd, args, runF) },
	}
	o.output = cmdutil.AddOutputFlag(cmd, formats...)
	fl := cmd.Flags()
	fl.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Heal RayClusters in every namespace")
	fl.BoolVar(&o.dryRun, "dry-run", false, "Print the plan and send the deletes as server-side dry runs; change nothing")
	fl.BoolVarP(&o.yes, "yes", "y", false, "Delete without asking")
	fl.BoolVar(&o.force, flagname.Force, false, "Also force-delete (grace period 0) heads stuck Terminating on a NotReady, unreachable or gone node")
	fl.BoolVar(&o.staleWorkers, flagname.StaleWorkers, false, "Also delete workers left from before a head restart without GCS fault tolerance (rule workers-stale); KubeRay creates new ones")
	fl.BoolVar(&o.removeGCSFT, flagname.RemoveGCSFTFinalizer, false, "Also remove KubeRay's Redis cleanup finalizer from RayClusters whose deletion it holds (gcs-ft-finalizer-stuck); their GCS data stays in Redis")
	fl.BoolVar(&o.wait, "wait", true, "Wait for each replacement head to be Running and Ready, and print how long it took")
	fl.DurationVar(&o.timeout, "timeout", 5*time.Minute, "How long --wait waits for the replacement heads")
	fl.BoolVar(&o.watch, "watch", false, "Run as a watchdog: heal heads as they break, until stopped")
	fl.DurationVar(&o.minAge, "min-age", 10*time.Second, "With --watch: heal a head only after it has needed healing this long")
	fl.BoolVar(&o.leaderElect, "leader-elect", false, "With --watch: act only while holding the Lease "+"kubectl-ray-heal, so several replicas can run")
	fl.StringVar(&o.leaseNamespace, "lease-namespace", "", "With --leader-elect: the namespace of the Lease")
	fl.IntVar(&o.workers, "workers", 32, "With --watch: how many RayClusters are examined and healed at once (never two for the same cluster)")
	fl.StringVar(&o.evidenceDir, "evidence-dir", evidence.DefaultDir, "Before each delete, keep the pod's YAML, Events and log tails (current and previous) under this directory, redacted; with --watch they go to the log, and here too only when set")
	fl.BoolVar(&o.noEvidence, "no-evidence", false, "Keep no evidence of the pods heal deletes")
	fl.StringVar(&o.metricsAddr, "metrics-bind-address", "", "With --watch: serve /metrics, /healthz and /readyz on this host:port (e.g. :8080); off when empty")
	o.accept = accept.AddFlags(cmd, "Never act on the findings this file accepts")
	fl.BoolVar(&o.includeAccepted, "include-accepted", false, "Act on findings the accept files accept, too")
	return cmd
}

// Complete reads NAME and the namespace, and records which flags were given.
func (o *Options) Complete(cmd *cobra.Command, args []string) error {
	fl := cmd.Flags()
	o.given = given{minAge: fl.Changed("min-age"), leaseNamespace: fl.Changed("lease-namespace"), workers: fl.Changed("workers"),
		evidenceDir: fl.Changed("evidence-dir"), wait: fl.Changed("wait"), timeout: fl.Changed("timeout")}
	set, rules, err := o.accept.Load()
	if err != nil {
		return err // a malformed accept file: nothing is read, nothing deleted
	}
	o.acceptSet, o.rules = set, rules
	if len(args) == 1 {
		t, err := ray.ParseTarget(args[0], ray.KindRayCluster)
		if err != nil {
			return exit.Usagef("cannot heal %q: name a RayCluster (NAME or raycluster/NAME)", args[0])
		}
		o.name = t.Name
	}
	if o.allNamespaces {
		return nil
	}
	ns, err := o.f.Namespace()
	if err != nil {
		return err
	}
	o.namespace = ns
	return nil
}

// given says which of the flags whose default is a valid value were on the command line: heal
// refuses a flag that does not apply only when it was given.
type given struct {
	minAge, leaseNamespace, workers, evidenceDir, wait, timeout bool
}

// Validate rejects flag combinations that make no sense, one line each.
func (o *Options) Validate() error {
	if err := o.output.Validate(); err != nil {
		return err
	}
	if err := cmdutil.NameScope(o.name, o.allNamespaces); err != nil {
		return err
	}
	switch {
	case o.timeout <= 0:
		return exit.Usagef("--timeout must be positive, e.g. --timeout 5m")
	case !o.watch && o.given.minAge:
		return exit.Usagef("--min-age applies only to --watch; a one-shot heal acts on what it sees now")
	case !o.watch && o.leaderElect:
		return exit.Usagef("--leader-elect applies only to --watch; a one-shot heal needs no leader")
	case o.given.leaseNamespace && !o.leaderElect:
		return exit.Usagef("--lease-namespace applies only with --leader-elect")
	case !o.watch && o.metricsAddr != "":
		return exit.Usagef("--metrics-bind-address applies only to --watch; a one-shot heal has nothing to scrape")
	case !o.watch && o.given.workers:
		return exit.Usagef("--workers applies only to --watch; a one-shot heal deletes its plan in order")
	case o.watch && (o.workers < 1 || o.workers > watchdog.MaxWorkers):
		return exit.Usagef("--workers must be between 1 and %d, e.g. --workers 8", watchdog.MaxWorkers)
	case !o.noEvidence && o.evidenceDir == "":
		// An empty directory would scatter NAMESPACE/POD directories into the working directory.
		return exit.Usagef("--evidence-dir is empty: give a directory, e.g. --evidence-dir ./kubectl-ray-evidence, or pass --no-evidence")
	case o.noEvidence && o.given.evidenceDir:
		return exit.Usagef("--no-evidence keeps nothing, so --evidence-dir has nowhere to apply: pass one or the other")
	case o.watch && o.removeGCSFT:
		return exit.Usagef("--remove-gcs-ft-finalizer is a one-shot decision about named clusters; a watchdog never removes finalizers: run without --watch")
	}
	if !o.watch {
		return nil
	}
	switch {
	case o.name != "":
		return exit.Usagef("--watch watches every RayCluster in scope, not one: use -n NAMESPACE or -A instead of a NAME")
	case o.given.wait || o.given.timeout:
		return exit.Usagef("--wait and --timeout belong to a one-shot heal; --watch never waits and never stops")
	case o.minAge < 0:
		return exit.Usagef("--min-age cannot be negative, e.g. --min-age 10s")
	case o.leaderElect && o.leaseNamespace == "":
		return exit.Usagef("--leader-elect needs --lease-namespace NAMESPACE: the namespace the watchdog replicas run in")
	case !o.yes && !o.dryRun:
		// A watchdog has nobody to ask: it deletes only when told up front, like a one-shot heal.
		return exit.Errorf(exit.NotConfirmed, "--watch deletes heads without asking: pass --yes, or --dry-run to only log what it would do")
	}
	return nil
}

// Run heals once, or watches.
func (o *Options) Run(cmd *cobra.Command) error {
	if o.watch {
		return o.runWatch(cmd.Context())
	}
	return o.runOnce(cmd.Context())
}
