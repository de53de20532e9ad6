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

	"github.com/kubectl-ray/kubectl-ray/pkg/cmd/bundle"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmd/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmd/doctor"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmd/heal"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmd/version"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// subcommandBinaries are the names under which the binary acts as one subcommand. kubectl
// resolves `kubectl ray doctor` to an executable kubectl-ray-doctor before kubectl-ray, so these
// work beside KubeRay's own kubectl-ray plugin.
var subcommandBinaries = []string{"doctor", "heal", "chaos", "bundle", "version"}

// KrewBinary is the name krew installs the binary under for the krew plugin "ray-ops" (krew turns
// the dash into an underscore). KubeRay's own krew plugin is "ray" (kubectl-ray), so ours is
// invoked as `kubectl ray-ops doctor` there and never replaces theirs.
const KrewBinary = "kubectl-ray_ops"

// completionPrefix starts the name of kubectl's plugin completion hooks (kubectl >= 1.26): for
// `kubectl ray doctor <TAB>` kubectl runs kubectl_complete-ray-doctor with the words after the
// plugin's name, the last one being the word to complete.
const completionPrefix = "kubectl_complete-"

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
		// The redactor's provider rules take some 30-70 ms to load: they load while the command
		// reads the cluster, not after, when its output waits on them. Not for doctor, whose
		// snapshot of a fleet is its peak of memory: it decides once it knows the fleet's size
		// (doctor's warmRedactor), and a large fleet loads them (some 19 MiB) to print, once the
		// snapshot is gone.
		PersistentPreRun: func(c *cobra.Command, _ []string) {
			switch c.Name() {
			case "doctor", "version", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd, "help":
				return
			}
			redact.Warm()
		},
	}
	f.ConfigFlags.AddFlags(root.PersistentFlags())
	_ = root.RegisterFlagCompletionFunc("namespace", f.CompleteNamespaces)
	root.PersistentFlags().BoolVar(&f.NoColor, "no-color", false, "Never color the output (NO_COLOR in the environment does the same)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exit.Usagef("%v; see '%s --help'", err, c.CommandPath())
	})
	// Every command, in one explicit list (as kubectl's and KubeRay's own plugin root do).
	root.AddCommand(doctor.NewCmd(f, nil), heal.NewCmd(f, nil), chaos.NewCmd(f), bundle.NewCmd(f, nil), version.NewCmd(f, nil))
	// Cobra adds `completion` only when it executes; adding it here puts it in the tree that
	// docs/reference is generated from.
	root.InitDefaultCompletionCmd()
	return root
}

// Main runs the plugin with args (os.Args) and returns the process exit code.
func Main(args []string, streams genericiooptions.IOStreams) int {
	flags := genericclioptions.NewConfigFlags(true)
	f := cmdutil.NewFactory(flags, streams)
	root := NewRootCmd(f)
	cobraArgs, display := dispatch(args)
	root.Annotations[cobra.CommandDisplayNameAnnotation] = display
	root.SetArgs(cobraArgs)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	err := root.Execute()
	if err == nil {
		return exit.OK
	}
	code := exit.CodeOf(err)
	if !exit.Has(err) {
		// Errors cobra makes itself (unknown command, wrong argument count) are usage errors.
		code, err = exit.Usage, cobraUsageError(root, cobraArgs, err)
	}
	if _, silent := err.(exit.Silent); !silent {
		fmt.Fprintf(streams.ErrOut, "error: %s\n", strings.TrimSpace(exit.Message(err)))
	}
	return code
}

// cobraUsageError makes one line of an error cobra wrote, with where to look: its suggestions
// ("Did you mean this?" on lines of their own) are folded in, and the help of the command that
// was meant is named.
func cobraUsageError(root *cobra.Command, args []string, err error) error {
	msg, suggestions, _ := strings.Cut(err.Error(), "\n\nDid you mean this?\n")
	if s := strings.Fields(suggestions); len(s) > 0 {
		msg += ` (did you mean "` + strings.Join(s, `" or "`) + `"?)`
	}
	path := root.CommandPath()
	if c, _, ferr := root.Find(args); ferr == nil && c != nil {
		path = c.CommandPath()
	}
	return fmt.Errorf("%s; see '%s --help'", strings.TrimSpace(msg), path)
}

// dispatch turns the invocation into cobra arguments and the name usage lines show. Run as
// kubectl-ray-doctor, the binary acts as `kubectl-ray doctor`; run as kubectl_complete-ray-doctor
// (kubectl's completion hook), as `kubectl-ray __complete doctor`; run as kubectl-ray_ops (krew's
// name for it), as itself, shown as `kubectl ray-ops`.
func dispatch(args []string) (cobraArgs []string, display string) {
	display = "kubectl ray"
	if len(args) == 0 {
		return nil, display
	}
	base := strings.TrimSuffix(filepath.Base(args[0]), ".exe")
	var prefix []string
	if rest, ok := strings.CutPrefix(base, completionPrefix); ok {
		prefix = append(prefix, cobra.ShellCompRequestCmd)
		base = "kubectl-" + rest
	}
	if base == KrewBinary {
		display = "kubectl ray-ops"
	}
	for _, sub := range subcommandBinaries {
		if base == "kubectl-ray-"+sub {
			prefix = append(prefix, sub)
		}
	}
	return append(prefix, args[1:]...), display
}
