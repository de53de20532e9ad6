// Package chaos is `kubectl ray chaos`: commands that break a Ray cluster on purpose, safely, to
// show what users see and whether it recovers. Each subcommand lives in its own file and adds
// itself to subcommands from init, so two engineers never edit the same file to add one.
package chaos

import (
	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
)

// subcommands are appended to by the subcommands' files.
var subcommands []func(*cmdutil.Factory) *cobra.Command

// NewCmd returns `kubectl ray chaos`, a parent with no action of its own.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chaos",
		Short: "Break a Ray cluster on purpose (head kill, disk or memory pressure) and watch it recover",
		// Without a Run, cobra prints help and exits 0 for a mistyped subcommand: a CI step with
		// a typo would pass. NoArgs makes it an unknown-command error (exit 2).
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	for _, add := range subcommands {
		cmd.AddCommand(add(f))
	}
	return cmd
}
