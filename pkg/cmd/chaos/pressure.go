package chaos

import (
	"bufio"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/pressure"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

func init() {
	subcommands = append(subcommands, NewDiskPressureCmd, NewMemoryPressureCmd)
}

// PressureOptions is shared by disk-pressure and memory-pressure.
type PressureOptions struct {
	f *cmdutil.Factory
	p pressure.Options

	amount       string
	fill         string
	role         string
	yes          bool
	dryRun       bool
	watch        bool
	timeout      time.Duration
	namespace    string
	cluster      string // RAYCLUSTER argument
	podName      string // pod/NAME argument
	roleExplicit bool
}

// newSuffix makes the container name unique in the pod; tests pin it.
var newSuffix = func() string { return utilrand.String(5) }

// NewDiskPressureCmd returns `kubectl ray chaos disk-pressure`.
func NewDiskPressureCmd(f *cmdutil.Factory) *cobra.Command {
	o := newPressureOptions(f, pressure.Disk)
	cmd := o.command("disk-pressure", "Fill disk next to a Ray pod from an ephemeral container, to reproduce node-pressure eviction",
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
	cmd.Flags().StringVar(&o.amount, "size", "", "How much disk to fill, a quantity such as 10Gi (or use --percent)")
	cmd.Flags().StringVar(&o.fill, "fill", string(pressure.FillNode), "Where to write: node (the container's own layer, fills node disk) or container (the Ray container's filesystem, counts against its limit)")
	_ = cmd.RegisterFlagCompletionFunc("fill", fixed("node", "container"))
	return cmd
}

// NewMemoryPressureCmd returns `kubectl ray chaos memory-pressure`.
func NewMemoryPressureCmd(f *cmdutil.Factory) *cobra.Command {
	o := newPressureOptions(f, pressure.Memory)
	cmd := o.command("memory-pressure", "Allocate memory in a Ray pod from an ephemeral container, to reproduce memory-pressure eviction or OOM",
		`Adds one ephemeral container to the target pod. Its own shell script holds the requested bytes
as anonymous memory of one process (busybox tail reading /dev/zero through a FIFO) for --duration,
then frees it and exits; the bound is inside the container. The memory is charged to the pod, so it
counts toward node MemoryPressure and, when every container has a limit, the pod's memory limit.
--percent is of the target container's memory limit, else of the node's MemAvailable read at
start. Ephemeral containers cannot be removed: the finished container stays in the pod's spec.`,
		`  kubectl ray chaos memory-pressure demo --role worker --bytes 2Gi --duration 1m --yes`)
	cmd.Flags().StringVar(&o.amount, "bytes", "", "How much memory to allocate, a quantity such as 2Gi (or use --percent)")
	return cmd
}

func newPressureOptions(f *cmdutil.Factory, kind pressure.Kind) *PressureOptions {
	return &PressureOptions{f: f, p: pressure.Options{Kind: kind}}
}

func (o *PressureOptions) command(use, short, long, example string) *cobra.Command {
	cmd := &cobra.Command{
		Use:     use + " (RAYCLUSTER [--role head|worker] | pod/NAME)",
		Short:   short,
		Long:    long,
		Example: example,
		Args:    cobra.ExactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return cmdutil.RunOptions(o, cmd, args) },
		// pod/NAME targets are typed by hand; RayCluster names come from the cluster.
		ValidArgsFunction: o.f.CompleteRayNames(cmdutil.CompleteClusters),
	}
	fl := cmd.Flags()
	fl.IntVar(&o.p.Percent, "percent", 0, "How much, in percent (1-100) of the container's limit, else of what is free")
	fl.DurationVar(&o.p.Duration, "duration", 2*time.Minute, "How long the pressure lasts, fill included; the container ends itself after it")
	fl.StringVar(&o.p.Image, "image", pressure.DefaultImage, "Image of the ephemeral container; needs sh, fallocate or dd, df, head, tail, mkfifo, sleep, kill, rm")
	fl.StringVar(&o.p.TargetContainer, "target-container", "", "Container whose namespaces to join (default: ray-head on a head, else the pod's first container)")
	fl.StringVar(&o.role, "role", "head", "With a RAYCLUSTER: target its head or a worker")
	_ = cmd.RegisterFlagCompletionFunc("role", fixed("head", "worker"))
	fl.BoolVar(&o.p.Force, "force", false, "Lift the size, percent and duration caps")
	fl.BoolVarP(&o.yes, "yes", "y", false, "Do not ask for confirmation")
	fl.BoolVar(&o.dryRun, "dry-run", false, "Print the exact ephemeral container and have the API server validate it; inject nothing")
	fl.BoolVar(&o.watch, "watch-eviction", false, "After injecting, watch the pod and its node and print the timeline until recovery or --timeout")
	fl.DurationVar(&o.timeout, "timeout", 10*time.Minute, "How long --watch-eviction waits")
	return cmd
}

func fixed(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// Complete reads the target argument and the namespace.
func (o *PressureOptions) Complete(cmd *cobra.Command, args []string) error {
	arg := args[0]
	if kind, name, ok := strings.Cut(arg, "/"); ok {
		if kind != "pod" && kind != "pods" && kind != "po" {
			return exit.Usagef("cannot target %q: name a RayCluster, or a pod as pod/NAME", arg)
		}
		o.podName = name
	} else {
		o.cluster = arg
	}
	if o.podName == "" && o.cluster == "" {
		return exit.Usagef("cannot target %q: name a RayCluster, or a pod as pod/NAME", arg)
	}
	o.roleExplicit = cmd.Flags().Changed("role")
	if o.p.Kind == pressure.Disk {
		o.p.Fill = pressure.Fill(o.fill)
	}
	o.p.Amount = o.amount
	o.p.Suffix = newSuffix()
	ns, err := o.f.Namespace()
	if err != nil {
		return err
	}
	o.namespace = ns
	return nil
}

// Validate checks every flag before the API is touched, so bad input injects nothing.
func (o *PressureOptions) Validate() error {
	if o.role != "head" && o.role != "worker" {
		return exit.Usagef("--role must be head or worker, not %q", o.role)
	}
	if o.podName != "" && o.roleExplicit {
		return exit.Usagef("--role applies to a RAYCLUSTER argument, not to pod/%s", o.podName)
	}
	if o.namespace == "kube-system" {
		return exit.Usagef("refusing to put pressure on pods in kube-system: it is never a chaos target")
	}
	if o.timeout <= 0 {
		return exit.Usagef("--timeout must be positive")
	}
	return o.p.Validate()
}

// Run resolves the pod, plans the container, confirms and injects it.
func (o *PressureOptions) Run(cmd *cobra.Command) error {
	ctx := cmdutil.Context(cmd)
	c, err := o.f.Clients()
	if err != nil {
		return err
	}
	pod, err := o.targetPod(ctx, c)
	if err != nil {
		return err
	}
	spec, err := pressure.Plan(pod, o.p)
	if err != nil {
		return err
	}
	ec := pressure.Container(spec)
	patch, err := kube.EphemeralContainerPatch(pod, ec)
	if err != nil {
		return exit.Errorf(exit.API, "cannot build the patch for pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	out, errOut := o.f.IOStreams.Out, o.f.IOStreams.ErrOut
	if o.dryRun {
		b, err := yaml.Marshal(ec)
		if err != nil {
			return err
		}
		// The server judges first: what is printed on stdout is a container the API server
		// (validation, admission, RBAC) would accept, and a refusal leaves stdout empty.
		if _, err := c.AddEphemeralContainer(ctx, pod, patch, true); err != nil {
			return err
		}
		if _, err := out.Write(b); err != nil {
			return err
		}
		fmt.Fprintf(errOut, "dry run: the API server accepted %s for pod %s/%s; nothing was injected\n", ec.Name, pod.Namespace, pod.Name)
		return nil
	}
	var pods watch.Interface
	if o.watch {
		// Open the watch before injecting, from the version read: a refusal (no RBAC to watch
		// pods) then leaves nothing injected, as its exit code says, and no event is missed.
		if pods, err = c.WatchTargetPods(ctx, pod.Namespace, podWatchSelector(pod), pod.Name, pod.ResourceVersion); err != nil {
			return err
		}
		defer pods.Stop()
	}
	if err := o.confirm(pod, spec); err != nil {
		return err
	}
	injected, err := c.AddEphemeralContainer(ctx, pod, patch, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "injected %s into pod %s/%s (target container %s, %s, for %s); its log: kubectl logs -n %s %s -c %s\n",
		ec.Name, pod.Namespace, pod.Name, spec.TargetContainer, o.what(spec), spec.Duration, pod.Namespace, pod.Name, ec.Name)
	if !o.watch {
		return nil
	}
	return o.watchEviction(ctx, c, injected, spec, pods)
}

// targetPod is the named pod, or the RayCluster's head or first Running worker found by ONE
// labelled LIST.
func (o *PressureOptions) targetPod(ctx context.Context, c *kube.Clients) (*corev1.Pod, error) {
	if o.podName != "" {
		return c.GetPodByName(ctx, o.namespace, o.podName)
	}
	selector := fmt.Sprintf("%s=%s,%s=%s", pressure.LabelCluster, o.cluster, pressure.LabelNodeType, o.role)
	pods, err := c.ListPodsMatching(ctx, o.namespace, selector)
	if err != nil {
		return nil, err
	}
	if len(pods) == 0 {
		return nil, exit.Errorf(exit.NotFound, "no %s pod of RayCluster %q in namespace %q; list them with: kubectl get pods -n %s -l %s",
			o.role, o.cluster, o.namespace, o.namespace, selector)
	}
	// Prefer a Running pod that is not going away; the name order makes the choice repeatable.
	sort.Slice(pods, func(i, j int) bool {
		ri, rj := usable(&pods[i]), usable(&pods[j])
		if ri != rj {
			return ri
		}
		return pods[i].Name < pods[j].Name
	})
	return &pods[0], nil
}

func usable(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil
}

func (o *PressureOptions) what(s pressure.Spec) string {
	switch {
	case s.Kind == pressure.Memory:
		return "memory: " + s.Basis
	case s.Fill == pressure.FillContainer:
		return "disk inside the container: " + s.Basis
	}
	return "node disk: " + s.Basis
}

// confirm asks on a terminal, and refuses without --yes anywhere else.
func (o *PressureOptions) confirm(pod *corev1.Pod, s pressure.Spec) error {
	if o.yes {
		return nil
	}
	what := fmt.Sprintf("add ephemeral container %s to pod %s/%s on node %s (%s, for %s)",
		s.Name, pod.Namespace, pod.Name, pod.Spec.NodeName, o.what(s), s.Duration)
	if !o.f.StdinIsTerminal() {
		return exit.Errorf(exit.NotConfirmed, "refusing to %s without --yes; ephemeral containers cannot be removed (it stays in the pod spec until the pod is deleted); pass --yes, or run in a terminal to confirm", what)
	}
	fmt.Fprintf(o.f.IOStreams.ErrOut, "This will %s.\nEphemeral containers cannot be removed: it stays in the pod's spec until the pod is deleted.\nContinue? [y/N] ", what)
	answer, _ := bufio.NewReader(o.f.IOStreams.In).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return exit.Errorf(exit.NotConfirmed, "not confirmed: nothing was injected")
	}
	return nil
}
