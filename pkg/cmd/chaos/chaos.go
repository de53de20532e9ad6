// Package chaos is `kubectl ray chaos`: commands that break a Ray cluster on purpose, safely, to
// show what users see and whether it recovers. Each subcommand lives in its own file; NewCmd
// lists them all.
package chaos

import (
	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
)

// NewCmd returns `kubectl ray chaos`, a parent with no action of its own.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chaos",
		Short: "Break a Ray cluster on purpose (head kill, worker kill, node drain, disk or memory pressure) and watch it recover",
		// Without a Run, cobra prints help and exits 0 for a mistyped subcommand: a CI step with
		// a typo would pass. NoArgs makes it an unknown-command error (exit 2).
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewHeadKillCmd(f, nil), NewDiskPressureCmd(f, nil), NewMemoryPressureCmd(f, nil), NewUpgradeCmd(f, nil), NewDrainCmd(f, nil), NewWorkerKillCmd(f, nil))
	return cmd
}
