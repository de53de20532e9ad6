package doctor

import (
	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// severities are the values of --min-severity, least severe first.
var severities = []diagnose.Severity{diagnose.SeverityInfo, diagnose.SeverityWarning, diagnose.SeverityError}

// addMinSeverity registers --min-severity with its completion.
func addMinSeverity(cmd *cobra.Command, o *Options) {
	cmd.Flags().StringVar(&o.minSeverity, "min-severity", "info",
		"Show only findings of this severity or worse: info|warning|error (--fail-on may not be below it)")
	_ = cmd.RegisterFlagCompletionFunc("min-severity", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"info", "warning", "error"}, cobra.ShellCompDirectiveNoFileComp
	})
}

// validateMinSeverity checks --min-severity against --fail-on (o.threshold(), already checked): a
// run must never fail on a finding it does not show.
func (o *Options) validateMinSeverity() error {
	min := diagnose.Severity(o.minSeverity)
	known := false
	for _, s := range severities {
		known = known || s == min
	}
	if !known {
		return exit.Usagef("unknown --min-severity %q: use --min-severity info|warning|error", o.minSeverity)
	}
	if t := o.threshold(); t != "" && t.Rank() < min.Rank() {
		return exit.Usagef("--fail-on %s would fail on findings --min-severity %s hides: raise --fail-on to %s, or lower --min-severity", t, min, min)
	}
	return nil
}

// shown drops the findings below --min-severity. Cluster health and the summary still count
// every finding: a cluster with only a hidden warning is still "with warnings".
func (o *Options) shown(r *diagnose.Report) {
	min := diagnose.Severity(o.minSeverity)
	kept := r.Findings[:0]
	for _, f := range r.Findings {
		if f.Severity.Rank() >= min.Rank() {
			kept = append(kept, f)
		}
	}
	r.Findings = kept
}
