package chaos

import (
	"time"

	"github.com/spf13/cobra"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/pressure"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
)

// PressureOptions is shared by disk-pressure and memory-pressure: flags bound to the runner's
// Settings (pressure_run.go runs it and maps the outcome to an exit code).
type PressureOptions struct {
	f *cmdutil.Factory
	s pressure.Settings

	amountFlag string // --size or --bytes
	fill       string
	yes        bool
	output     *cmdutil.OutputFlag
	reportHTML string
}

// newSuffix makes the container name unique in the pod; tests pin it.
var newSuffix = func() string { return utilrand.String(5) }

// NewDiskPressureCmd returns `kubectl ray chaos disk-pressure`; runF, when set, gets the completed and validated options instead of Run (flag tests).
func NewDiskPressureCmd(f *cmdutil.Factory, runF func(*PressureOptions) error) *cobra.Command {
	o := newPressureOptions(f, pressure.Disk)
	cmd := o.command(runF, "disk-pressure", "Fill disk next to a Ray pod from an ephemeral container, to reproduce node-pressure eviction",
		`Adds one ephemeral container to the target pod. Its own shell script fills disk with fallocate
(falling back to dd), holds for --duration, removes the file and exits; the bound is inside the
container, so it holds even if this command dies. Ephemeral containers cannot be removed: the
finished container stays in the pod's spec until the pod is deleted.

--fill node (default) writes in the ephemeral container's own writable layer: node disk fills
(DiskPressure, eviction of the pod as in KubeRay issue #2125). --fill container writes through
/proc/1/root into the Ray container's filesystem, counting against its ephemeral-storage limit.
--percent is of that limit with --fill container when there is one, else of the free space
measured inside the container when it starts.`,
		`  # Fill 95% of the free node disk next to the head of RayCluster demo for 2 minutes, and watch
  kubectl ray chaos disk-pressure demo --percent 95 --watch-eviction --yes
  # Print the exact container, inject nothing
  kubectl ray chaos disk-pressure pod/demo-head-x7k2p --size 10Gi --dry-run`)
	o.amountFlag = "--size"
	cmd.Flags().StringVar(&o.s.Amount, "size", "", "How much disk to fill, a quantity such as 10Gi (or use --percent)")
	cmd.Flags().StringVar(&o.fill, "fill", string(pressure.FillNode), "Where to write: node (the container's own layer, fills node disk) or container (the Ray container's filesystem, counts against its limit)")
	_ = cmd.RegisterFlagCompletionFunc("fill", fixed("node", "container"))
	return cmd
}

// NewMemoryPressureCmd returns `kubectl ray chaos memory-pressure`; runF as NewDiskPressureCmd.
func NewMemoryPressureCmd(f *cmdutil.Factory, runF func(*PressureOptions) error) *cobra.Command {
	o := newPressureOptions(f, pressure.Memory)
	cmd := o.command(runF, "memory-pressure", "Allocate memory in a Ray pod from an ephemeral container, to reproduce memory-pressure eviction or OOM",
		`Adds one ephemeral container to the target pod. Its own shell script holds the requested bytes
as anonymous memory of dd processes (each reads at most 1 GiB of /dev/zero in one read, at memory
speed, and blocks holding it), says how long after its start all of it was resident, holds for
--duration, then frees it and exits; the bound is inside the container. The memory is charged to the pod, so it
counts toward node MemoryPressure and, when every container has a limit, the pod's memory limit.
--percent is of the target container's memory limit, else of the node's MemAvailable read at
start. Ephemeral containers cannot be removed: the finished container stays in the pod's spec.`,
		`  kubectl ray chaos memory-pressure demo --role worker --bytes 2Gi --duration 1m --yes`)
	o.amountFlag = "--bytes"
	cmd.Flags().StringVar(&o.s.Amount, "bytes", "", "How much memory to allocate, a quantity such as 2Gi (or use --percent)")
	return cmd
}

func newPressureOptions(f *cmdutil.Factory, kind pressure.Kind) *PressureOptions {
	return &PressureOptions{f: f, s: pressure.Settings{Options: pressure.Options{Kind: kind}}}
}

func (o *PressureOptions) command(runF func(*PressureOptions) error, use, short, long, example string) *cobra.Command {
	cmd := &cobra.Command{
		Use:     use + " (RAYCLUSTER [--role head|worker] | pod/NAME)",
		Short:   short,
		Long:    long,
		Example: example,
		Args:    cobra.ExactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return cmdutil.RunOptionsOr(o, cmd, args, runF) },
		// pod/NAME targets are typed by hand; RayCluster names come from the cluster.
		ValidArgsFunction: o.f.CompleteRayNames(cmdutil.CompleteClusters),
	}
	fl := cmd.Flags()
	fl.IntVar(&o.s.Percent, "percent", 0, "How much, in percent (1-100) of the container's limit, else of what is free")
	fl.DurationVar(&o.s.Duration, "duration", 2*time.Minute, "How long the pressure lasts, fill included; the container ends itself after it")
	fl.StringVar(&o.s.Image, "image", pressure.DefaultImage, "Image of the ephemeral container; needs sh, fallocate or dd, df, head, mkfifo, sleep, kill, rm")
	fl.StringVar(&o.s.TargetContainer, "target-container", "", "Container whose namespaces to join (default: ray-head on a head, else the pod's first container)")
	fl.StringVar(&o.s.Role, "role", "head", "With a RAYCLUSTER: target its head or a worker")
	_ = cmd.RegisterFlagCompletionFunc("role", fixed("head", "worker"))
	fl.BoolVar(&o.s.Force, "force", false, "Lift the size, percent and duration caps")
	fl.BoolVarP(&o.yes, "yes", "y", false, "Do not ask for confirmation")
	fl.BoolVar(&o.s.DryRun, "dry-run", false, "Print the exact ephemeral container and have the API server validate it; inject nothing")
	fl.BoolVar(&o.s.Watch, "watch-eviction", false, "After injecting, watch the pod and its node and print the timeline until recovery or --timeout")
	fl.DurationVar(&o.s.Timeout, "timeout", 10*time.Minute, "How long --watch-eviction waits")
	o.output = cmdutil.AddOutputFlag(cmd, "text", "json", "junit")
	fl.Lookup("output").Usage = "Report format: text|json|junit (text: the timeline as it happens; json, junit: the report on stdout, the timeline on stderr)"
	fl.StringVar(&o.reportHTML, "report-html", "", "Also write the report as one self-contained HTML page to this file")
	return cmd
}

func fixed(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}
