package kube

import (
	"fmt"
	"strings"
)

// NotFoundText is the one wording of "a named object is not there", for every command and for
// API errors alike: what was looked for, where, and the kubectl command that lists what there
// is. kinds are what the name may be (e.g. "RayCluster", or "RayCluster", "RayService", "RayJob"
// for a bare name doctor accepts); namespace "" means every namespace.
func NotFoundText(name, namespace, selector string, kinds ...string) string {
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
	return fmt.Sprintf("%s %q not found %s; list them with: kubectl get %s%s", what, name, where, strings.Join(resources, ","), flags)
}

// kinds names the namespaced resources this plugin reads by name, as kubectl prints their kind.
var kinds = map[string]string{
	"pods":               "Pod",
	"services":           "Service",
	"rayclusters.ray.io": "RayCluster",
	"rayservices.ray.io": "RayService",
	"rayjobs.ray.io":     "RayJob",
}
