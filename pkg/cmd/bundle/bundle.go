// Package bundle is `kubectl ray bundle`: read what doctor reads and more, and write it, redacted,
// into one archive a maintainer can be sent. What to collect and how each file is rendered and
// redacted is pkg/bundle; the reads are pkg/kube's.
package bundle

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	corebundle "github.com/kubectl-ray/kubectl-ray/pkg/bundle"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/flagname"
	"github.com/kubectl-ray/kubectl-ray/pkg/gc"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/load"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Options for `kubectl ray bundle`.
type Options struct {
	f             *cmdutil.Factory
	output        string
	allNamespaces bool
	selector      string
	force         bool
	noLogs        bool
	noRayLogs     bool
	ray           bool // --ray as given; readRay is what it means for this target
	readRay       bool
	rayLogBytes   int64
	limits        artifact.LogLimits
	timeout       time.Duration

	namespace string // "" with -A
	target    *diagnose.Target
}

// parallel is how many reads a bundle makes at once: enough to hide the round trips of hundreds
// of log reads, few enough not to crowd an API server (client-go's limiter still applies).
const parallel = 8

// sourceOf is what the bundle's reads go through: the clients themselves; the tests play the
// kubelet's logs there (client-go's fake answers every log read with the same words).
var sourceOf = func(c *kube.Clients) corebundle.Source { return c }

const example = `  # Bundle every RayCluster of the current namespace, with its pods' logs
  kubectl ray bundle -o ray-bundle.tar.gz

  # Bundle one RayService (its clusters, pods, Services, Events, the operator's log about it)
  kubectl ray bundle rayservice/my-service -n ml -o my-service.tar.gz

  # Everything, without logs, overwriting yesterday's archive
  kubectl ray bundle -A --no-logs -o ray-bundle.tar.gz --force`

// NewCmd returns `kubectl ray bundle`; runF, when set, gets the completed and validated options
// instead of Run (tests of the flags).
func NewCmd(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{f: f}
	cmd := &cobra.Command{
		Use:   "bundle [NAME | raycluster/NAME | rayservice/NAME | rayjob/NAME | raycronjob/NAME] -o FILE.tar.gz",
		Short: "Write a redacted archive of Ray clusters' state, Events and logs, for a post-mortem",
		Long: `bundle writes one gzip'd tar archive of what the people who fix a broken Ray cluster ask for:
the RayClusters, RayServices and RayJobs with their status, their pods, Services,
EndpointSlices, the Jobs of RayJobs, the PodDisruptionBudgets covering their pods, and the
Events about all of them (JSON, as kubectl get -o json writes them); each container's log,
current and previous where it restarted, init containers and sidecars included, capped by --tail
and --limit-bytes; Ray's own log files from each running head (/tmp/ray/session_latest/logs,
through one exec of tar as kubectl cp copies, each file's end up to --limit-bytes,
--ray-log-bytes in all); Ray's view from each head's dashboard, the answers to the reads doctor
--ray makes, as they came (a named target's by default, every cluster's with --ray), which
doctor --from replays; the nodes the pods run on (conditions, taints, allocatable); the KubeRay
operator's Deployment and its log, cut to the lines naming these clusters; the versions of the
client, API server, operator and ray.io CRDs; and doctor's report on the same snapshot (table
and JSON). index.md, the archive's first file, lists what is inside and what could not be
collected and why: a read that fails (RBAC, a node with no kubelet, the --timeout) is listed
there and never stops the others.

Everything is redacted before it is written: env values and start parameters under
secret-sounding names, Redis passwords, the names of referenced Secrets, credentials in URLs
(runtime_env, pip indexes), and every such value wherever else it appears, logs included.
Secrets are never read.

Reads: one paged LIST per kind, as doctor's, one GET of pods/log per container, one exec per
running head, and with Ray's view one port-forward per head (RBAC: doctor's roles, and get on
pods/log, create on pods/exec and list on poddisruptionbudgets.policy; docs/rbac.md).
An existing FILE is not overwritten without --force; the archive is written beside it and
renamed at the end, so a failure leaves nothing under FILE.

Exit codes: 0 written (reads that failed are listed in its index); 2 usage, or FILE exists;
3 API error, or FILE could not be written; 4 forbidden to list RayClusters or pods; 5 the named
object does not exist.`,
		Example:           example,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: f.CompleteRayNames(cmdutil.CompleteClusters | cmdutil.CompleteServices),
		RunE:              func(cmd *cobra.Command, args []string) error { return cmdutil.RunOptionsOr(o, cmd, args, runF) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.output, "output", "o", "", "The archive to write (FILE.tar.gz); required")
	fl.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Bundle RayClusters in all namespaces")
	fl.StringVarP(&o.selector, "selector", "l", "", "Bundle only RayClusters with these labels (e.g. team=ml,env!=dev)")
	fl.BoolVar(&o.force, "force", false, "Overwrite FILE if it exists")
	fl.BoolVar(&o.noLogs, "no-logs", false, "Leave container logs out (the operator's log and Ray's log files too)")
	fl.BoolVar(&o.ray, flagname.Ray, false, "Also read each head's Ray dashboard through a port-forward, as doctor --ray does, and keep its answers; the default reads it only for a named cluster, RayService or RayJob; --ray=false never")
	fl.BoolVar(&o.noRayLogs, "no-ray-logs", false, "Leave Ray's log files out (no exec in the heads); container logs stay")
	fl.Int64Var(&o.rayLogBytes, "ray-log-bytes", 16<<20, "At most this many bytes of each head's Ray log directory; 0 for no limit")
	fl.Int64Var(&o.limits.Tail, "tail", 2000, "Lines from the end of each container log; -1 for all")
	fl.Int64Var(&o.limits.LimitBytes, "limit-bytes", 1<<20, "At most this many bytes of each container log; 0 for no limit")
	fl.DurationVar(&o.limits.Since, "since", 0, "Only log lines newer than this (e.g. 1h); 0 for all")
	fl.DurationVar(&o.timeout, "timeout", 2*time.Minute, "Stop reading after this long; what was not read by then is listed in the index")
	return cmd
}

// Complete reads the namespace and the target.
func (o *Options) Complete(cmd *cobra.Command, args []string) error {
	if !o.allNamespaces {
		ns, err := o.f.Namespace()
		if err != nil {
			return err
		}
		o.namespace = ns
	}
	if len(args) == 1 {
		t, err := ray.ParseTarget(args[0], ray.KindRayCluster, ray.KindRayService, ray.KindRayJob, ray.KindRayCronJob)
		if err != nil {
			return exit.Usagef("cannot bundle %q: name a raycluster/NAME, rayservice/NAME, rayjob/NAME or raycronjob/NAME", args[0])
		}
		o.target = &t
	}
	// As doctor: --ray asks every cluster bundled, --ray=false none; unset, a named one only (a
	// port-forward per cluster of a sweep is doctor's opt-in too).
	o.readRay = o.target != nil
	if cmd.Flags().Changed(flagname.Ray) {
		o.readRay = o.ray
	}
	return nil
}

// Validate checks the flags before anything is read; Run checks the output path first.
func (o *Options) Validate() error {
	if o.target != nil {
		if err := cmdutil.NameScope(o.target.Name, o.allNamespaces); err != nil {
			return err
		}
	}
	if _, err := labels.Parse(o.selector); err != nil {
		return exit.Usagef("bad label selector %q: %v; write it as kubectl does, e.g. -l team=ml,env!=dev", o.selector, err)
	}
	if o.limits.Tail < -1 || o.limits.LimitBytes < 0 || o.limits.Since < 0 || o.rayLogBytes < 0 {
		return exit.Usagef("--tail is -1 or more, --limit-bytes, --ray-log-bytes and --since 0 or more")
	}
	if o.timeout <= 0 {
		return exit.Usagef("--timeout must be a positive duration, e.g. --timeout 2m")
	}
	return nil
}

// Run reads, renders and writes the bundle.
func (o *Options) Run(cmd *cobra.Command) error {
	// The output path is checked first, before anything is read, but here rather than in
	// Validate: it asks the file system, and Validate judges the options alone.
	if err := exitError(corebundle.CheckOutput(o.output, o.force)); err != nil {
		return err
	}
	c, err := o.f.Clients()
	if err != nil {
		return err
	}
	gc.Tune(gc.Bundle) // read once, rendered as it comes (docs/performance.md)
	ctx, cancel := context.WithTimeout(cmdutil.Context(cmd), o.timeout)
	defer cancel()
	p := newProgress(o.f.IOStreams.ErrOut)
	p.say("reading what doctor reads")
	// The objects the archive holds are rendered as their pages arrive (stream), and the snapshot
	// is trimmed as doctor's: doctor's findings are the same either way (TestTrimChangesNothing).
	stream := corebundle.NewStream()
	q := load.Query{Namespace: o.namespace, Selector: o.selector, Now: o.f.Now(), Reads: diagnose.Reads,
		Full: &load.Full{Cluster: stream.Cluster, RayService: stream.RayService, RayJob: stream.RayJob, RayCronJob: stream.RayCronJob, Pod: stream.Pod, Node: stream.Node, Job: stream.Job}}
	if o.readRay {
		q.Ray = &load.RayQuery{Target: o.target, Keep: true}
	}
	s, err := load.FromAPI(ctx, c, q)
	stream.Close()
	if err != nil {
		p.done()
		return err
	}
	if o.target != nil && diagnose.Unlisted(s, *o.target) != "" {
		p.done()
		return exit.Errorf(exit.Forbidden, "cannot bundle %s: %s", o.target, diagnose.Unlisted(s, *o.target))
	}
	if o.target != nil && !diagnose.Has(s, *o.target) {
		p.done()
		return o.notFound()
	}
	plan := corebundle.MakePlan(s, o.target, corebundle.PlanOptions{Logs: !o.noLogs, RayLogs: !o.noRayLogs, AllNamespaces: o.allNamespaces, Stream: stream})
	got := corebundle.Collect(ctx, sourceOf(c), plan, corebundle.CollectOptions{Limits: o.limits, RayLogBytes: o.rayLogBytes,
		Parallel: parallel, Progress: p.count, Stream: stream})
	p.done()
	contents := corebundle.Render(s, plan, got, stream)
	report := diagnose.DiagnoseTarget(s, diagnose.DefaultOptions(), o.target)
	contents.Files = append(o.doctorFiles(&report), contents.Files...)
	index := corebundle.Index(o.header(s.Now), contents)
	r := state.Redactor(s, contents.Found, stream.Secrets())
	w, err := corebundle.Write(o.output, s.Now, index, contents.Files, contents.Spooled, r, o.force)
	if err != nil {
		return exitError(err)
	}
	fmt.Fprintf(o.f.IOStreams.Out, "wrote %s: %d files, %s; %s\n", o.output, w.Files, size(w.Bytes), gapsLine(len(contents.Gaps)))
	return nil
}
