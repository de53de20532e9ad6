package chaos

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/pressure"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Complete reads the target argument and the namespace.
func (o *PressureOptions) Complete(cmd *cobra.Command, args []string) error {
	t, err := ray.ParseTarget(args[0], ray.KindPod)
	if err != nil || t.Name == "" {
		return exit.Usagef("cannot target %q: name a RayCluster, or a pod as pod/NAME", args[0])
	}
	if t.Kind == ray.KindPod {
		o.s.Pod = t.Name
	} else {
		o.s.Cluster = t.Name
	}
	o.s.RoleSet = cmd.Flags().Changed("role")
	o.s.PercentSet = cmd.Flags().Changed("percent")
	if o.s.Kind == pressure.Disk {
		o.s.Fill = pressure.Fill(o.fill)
	}
	o.s.Suffix = newSuffix()
	return inNamespace(o.f, &o.s.Namespace)
}

// Validate checks every flag before the API is touched, so bad input injects nothing.
func (o *PressureOptions) Validate() error {
	if err := o.s.Validate(); err != nil {
		return o.exitError(err)
	}
	return validateOutput(o.output, o.s.DryRun, "--dry-run prints the ephemeral container, which has no result for JUnit: use -o text (YAML) or -o json")
}

// exitError shows the runner's settings as this command's flags.
func (o *PressureOptions) exitError(err error) error { return exitError(err, o.flagOf) }

// flagOf is a setting's flag on this command: the amount's is --size or --bytes.
func (o *PressureOptions) flagOf(s fault.Field) string {
	if s == pressure.SetAmount {
		return o.amountFlag
	}
	return flagOf(s)
}

// Run runs the experiment, prints its report and maps the outcome to the exit code.
func (o *PressureOptions) Run(cmd *cobra.Command) error {
	if err := reportHTMLWritable(o.reportHTML); err != nil {
		return err
	}
	ctx := cmdutil.Context(cmd)
	c, err := o.f.Clients()
	if err != nil {
		return err
	}
	out, errOut := o.f.IOStreams.Out, o.f.IOStreams.ErrOut
	if o.s.DryRun {
		// The server judges first: what is printed on stdout is a container the API server
		// (validation, admission, RBAC) would accept, and a refusal leaves stdout empty.
		p, err := pressure.DryRun(ctx, c, o.s)
		if err != nil {
			return o.exitError(err)
		}
		// text is the container as YAML, as kubectl debug shows it; -o json the same as JSON.
		format := cmdutil.FormatYAML
		if o.output.Value == "json" {
			format = cmdutil.FormatJSON
		}
		if err := cmdutil.PrintStructured(out, format, p.Container); err != nil {
			return err
		}
		fmt.Fprintf(errOut, "dry run: the API server accepted %s for pod %s/%s; nothing was injected\n", p.Container.Name, p.Pod.Namespace, p.Pod.Name)
		if p.Warning != "" {
			fmt.Fprintf(errOut, "warning: %s\n", p.Warning)
		}
		return nil
	}
	o.s.Now, o.s.Warn, o.s.Progress = o.f.Now, errOut, out
	if o.output.Value != "text" {
		o.s.Progress = errOut // stdout holds the document only
	}
	o.s.Confirm = confirmation{f: o.f, yes: o.yes,
		refusal:  "refusing to %s without --yes; ephemeral containers cannot be removed (it stays in the pod spec until the pod is deleted); pass --yes, or run in a terminal to confirm",
		note:     "Ephemeral containers cannot be removed: it stays in the pod's spec until the pod is deleted.\n",
		declined: "not confirmed: nothing was injected"}.ask
	r, outcome, err := pressure.Run(ctx, c, o.s)
	if err != nil {
		return o.exitError(err)
	}
	if err := o.output.Print(out, pressureReport{r: r, watched: o.s.Watch}); err != nil {
		return err
	}
	verdict := outcomeExit(errOut, nil, outcome, o.flagOf)
	return withHTML(o.f, o.reportHTML, verdict, func(w io.Writer) error { return pressure.WriteHTML(w, r) })
}
