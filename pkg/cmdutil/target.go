package cmdutil

import (
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
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
// command and for API errors (kube.NotFoundText). kinds are what the name may be; namespace ""
// means every namespace.
func NotFound(name, namespace, selector string, kinds ...string) error {
	return exit.Errorf(exit.NotFound, "%s", kube.NotFoundText(name, namespace, selector, kinds...))
}
