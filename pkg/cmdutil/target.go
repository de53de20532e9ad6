package cmdutil

import (
	"fmt"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// NameScope refuses a NAME with -A, as `kubectl get NAME -A` does: a name is looked up in one
// namespace. Every command that takes a NAME checks it the same way, with the same words.
func NameScope(name string, allNamespaces bool) error {
	if name != "" && allNamespaces {
		return exit.Usagef("a NAME is looked up in one namespace, as in kubectl get: pass -n NAMESPACE instead of -A, or drop the NAME")
	}
	return nil
}

// NotFound is the error for a named object that is not there, in the same words for every
// command: what was looked for, where, and the kubectl command that lists what there is.
// kinds are what the name may be (e.g. "RayCluster", or "RayCluster", "RayService", "RayJob"
// for a bare name doctor accepts); namespace "" means every namespace.
func NotFound(name, namespace, selector string, kinds ...string) error {
	var resources []string
	for _, k := range kinds {
		resources = append(resources, strings.ToLower(k)+"s")
	}
	what := kinds[0]
	if n := len(kinds); n > 1 {
		what = strings.Join(kinds[:n-1], ", ") + " or " + kinds[n-1]
	}
	where, flags := "in any namespace", " -A"
	if namespace != "" {
		where, flags = fmt.Sprintf("in namespace %q", namespace), " -n "+namespace
	}
	if selector != "" {
		where += " matching -l " + selector
		flags += " -l " + selector
	}
	return exit.Errorf(exit.NotFound, "%s %q not found %s; list them with: kubectl get %s%s", what, name, where, strings.Join(resources, ","), flags)
}
