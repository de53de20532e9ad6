package cmdutil

import (
	"strings"

	"github.com/spf13/cobra"
)

// CompleteNamespaces completes -n with the namespaces of the kubeconfig's cluster (as kubectl
// does), read with the user's own credentials; errors complete nothing rather than print.
func (f *Factory) CompleteNamespaces(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	c, err := f.Clients()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, n := range c.NamespaceNames(Context(cmd)) {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
