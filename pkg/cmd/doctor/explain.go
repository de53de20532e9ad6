package doctor

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// newExplainCmd returns `kubectl ray doctor explain RULE`: the rule's section of docs/rules.md,
// which the binary carries.
func newExplainCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "explain RULE",
		Short: "Explain a doctor rule: what fires it, what each KubeRay version does, the remedy",
		Long: `explain prints a rule's page of the rule catalogue (docs/rules.md, carried in the binary):
what makes it fire, the evidence it reports, how the message and remedy depend on the KubeRay
operator's version, and the KubeRay issues behind it. Rule IDs are in every finding (RULE column,
"rule" in -o json). A RayCluster named "explain" is checked as raycluster/explain.`,
		Example: `  kubectl ray doctor explain head-evicted`,
		Args:    cobra.ExactArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var ids []string
			for _, r := range diagnose.Catalog {
				if strings.HasPrefix(r.ID, toComplete) {
					ids = append(ids, r.ID)
				}
			}
			return ids, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			doc, ok := diagnose.RuleDoc(args[0])
			if !ok {
				var ids []string
				for _, r := range diagnose.Catalog {
					ids = append(ids, r.ID)
				}
				return exit.Usagef("unknown rule %q: use one of %s", args[0], strings.Join(ids, ", "))
			}
			_, err := fmt.Fprint(f.IOStreams.Out, doc)
			return err
		},
	}
}
