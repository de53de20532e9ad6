package cmdutil

import (
	"strings"

	"github.com/spf13/cobra"
)

// Completion forms: which names a command's NAME argument accepts.
const (
	// CompleteClusters offers RayCluster names, bare and as raycluster/NAME.
	CompleteClusters = 1 << iota
	// CompleteServices offers rayservice/NAME.
	CompleteServices
)

// CompleteRayNames is a ValidArgsFunction for a single NAME argument: RayCluster and/or
// RayService names from the cluster, in -n's namespace (or every namespace with -A, read from
// the command's all-namespaces flag). Errors complete nothing rather than print.
func (f *Factory) CompleteRayNames(forms int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := f.Clients()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ns := ""
		if all, _ := cmd.Flags().GetBool("all-namespaces"); !all {
			if ns, err = f.Namespace(); err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
		}
		clusters, services := c.RayNames(cmd.Context(), ns)
		var out []string
		if forms&CompleteClusters != 0 {
			for _, n := range clusters {
				out = append(out, n, "raycluster/"+n)
			}
		}
		if forms&CompleteServices != 0 {
			for _, n := range services {
				out = append(out, "rayservice/"+n)
			}
		}
		var matched []string
		for _, n := range out {
			if strings.HasPrefix(n, toComplete) {
				matched = append(matched, n)
			}
		}
		return matched, cobra.ShellCompDirectiveNoFileComp
	}
}
