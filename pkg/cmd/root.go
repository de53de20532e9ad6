// Package cmd assembles the kubectl-ray command tree. Commands are thin: they parse flags into
// Options and call the core packages (diagnose, repair, chaos).
package cmd

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmd/version"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// subcommandBinaries are the names under which the binary acts as one subcommand. kubectl
// resolves `kubectl ray doctor` to an executable kubectl-ray-doctor before kubectl-ray, so these
// work beside KubeRay's own kubectl-ray plugin.
var subcommandBinaries = []string{"doctor", "heal", "chaos", "version"}

// NewRootCmd builds the command tree around f.
func NewRootCmd(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-ray",
		Short: "Diagnose, repair and stress-test Ray clusters run by KubeRay",
		Long: `kubectl ray finds Ray heads that KubeRay will not repair (evicted, stuck, crash-looping,
missing), repairs them safely, and measures what clients see when a head dies.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		// Plugins are invoked as "kubectl ray"; show that in usage lines.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl ray"},
	}
	f.ConfigFlags.AddFlags(root.PersistentFlags())
	root.PersistentFlags().BoolVar(&f.NoColor, "no-color", false, "Never color the output (NO_COLOR in the environment does the same)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exit.Usagef("%v; see '%s --help'", err, c.CommandPath())
	})
	root.AddCommand(version.NewCmd(f))
	for _, add := range extraCommands {
		root.AddCommand(add(f))
	}
	return root
}

// extraCommands are registered by the command packages' files in this package (one per command),
// so adding a command touches one file.
var extraCommands []func(*cmdutil.Factory) *cobra.Command

// Main runs the plugin with args (os.Args) and returns the process exit code.
func Main(args []string, streams genericiooptions.IOStreams) int {
	flags := genericclioptions.NewConfigFlags(true)
	f := cmdutil.NewFactory(flags, streams)
	root := NewRootCmd(f)
	root.SetArgs(dispatch(args))
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	err := root.Execute()
	if err == nil {
		return exit.OK
	}
	if _, silent := err.(exit.Silent); !silent {
		fmt.Fprintf(streams.ErrOut, "error: %s\n", strings.TrimSpace(err.Error()))
	}
	if !exit.Has(err) {
		// Errors cobra makes itself (unknown command, wrong argument count) are usage errors.
		return exit.Usage
	}
	return exit.CodeOf(err)
}

// dispatch turns the invocation into cobra arguments: run as kubectl-ray-doctor, the binary acts
// as `kubectl-ray doctor`.
func dispatch(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	base := strings.TrimSuffix(filepath.Base(args[0]), ".exe")
	for _, sub := range subcommandBinaries {
		if base == "kubectl-ray-"+sub {
			return append([]string{sub}, args[1:]...)
		}
	}
	return args[1:]
}
