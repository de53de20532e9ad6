package kube

import (
	"regexp"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// missingEntry matches client-go's errors for a context or cluster the kubeconfig does not
// have (clientcmd's getContext and getCluster).
var missingEntry = regexp.MustCompile(`^(context|cluster) "([^"]*)" does not exist`)

// explainConfig turns an error loading the kubeconfig into one line naming the problem and the
// kubectl command that shows the choices, exit code 3 like every error before the API answers.
func explainConfig(flags *genericclioptions.ConfigFlags, err error) error {
	format, args := "%s %q is not in the kubeconfig; list them with: kubectl config %s", []any{}
	if flags.KubeConfig != nil && *flags.KubeConfig != "" {
		format += " %s %s"
		args = append(args, SetKubeconfig, *flags.KubeConfig)
	}
	if m := missingEntry.FindStringSubmatch(err.Error()); m != nil {
		list := "get-contexts"
		if m[1] == "cluster" {
			list = "get-clusters"
		}
		return fault.Errorf(fault.API, format, append([]any{m[1], m[2], list}, args...)...)
	}
	return fault.Errorf(fault.API, "cannot load a cluster configuration: %s; pass %s or set KUBECONFIG, and %s", oneLine(err), SetKubeconfig, SetContext)
}
