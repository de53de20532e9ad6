package diagnose

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RulePodResourcesInvalid: a container of a group's pod template asks for resources the API server
// refuses in every pod (kube-apiserver's ValidateResourceRequirements, pkg/apis/core/validation):
// a request above its limit; for an extended resource (nvidia.com/gpu, any name with a domain
// outside kubernetes.io) or hugepages, which cannot be overcommitted, a request without a limit
// or unequal to it; an extended resource that is not a whole number. The RayCluster itself is
// accepted (its CRD does not validate the pod template), so nothing fails at apply: KubeRay's
// every attempt to create the group's pods is refused, and the group never starts (live, doctor
// then reports head-missing or workers-missing with the API server's words). A common slip with
// GPUs (kuberay #736 asks for these checks before apply).
const RulePodResourcesInvalid = "pod-resources-invalid"

// resourceProblem is one refusal of a container's resources, as the API server would say it.
type resourceProblem struct {
	field, text string
}

// nativeResource mirrors Kubernetes' IsNativeResource: no domain, or the kubernetes.io domain.
func nativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// overcommitAllowed mirrors Kubernetes' IsOvercommitAllowed: native resources other than
// hugepages may have a request below their limit.
func overcommitAllowed(name corev1.ResourceName) bool {
	return nativeResource(name) && !strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// extendedResource mirrors Kubernetes' IsExtendedResourceName, without its name-syntax check
// (a name that fails it is refused anyway, by another check).
func extendedResource(name corev1.ResourceName) bool {
	return !nativeResource(name) && !strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix)
}

// containerResourceProblems are what the API server refuses in c's resources; path is the
// container's field path.
func containerResourceProblems(c *corev1.Container, path string) []resourceProblem {
	var out []resourceProblem
	r := c.Resources
	names := map[corev1.ResourceName]bool{}
	for n := range r.Requests {
		names[n] = true
	}
	for n := range r.Limits {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, string(n))
	}
	sort.Strings(sorted)
	for _, s := range sorted {
		name := corev1.ResourceName(s)
		req, hasReq := r.Requests[name]
		lim, hasLim := r.Limits[name]
		if extendedResource(name) {
			for _, q := range []struct {
				kind string
				ok   bool
				v    string
				frac bool
			}{{"requests", hasReq, req.String(), req.MilliValue()%1000 != 0}, {"limits", hasLim, lim.String(), lim.MilliValue()%1000 != 0}} {
				if q.ok && q.frac {
					out = append(out, resourceProblem{path + ".resources." + q.kind + "." + s,
						fmt.Sprintf("container %s: %s %s of %s is not a whole number (an extended resource must be)", c.Name, q.kind, q.v, s)})
				}
			}
		}
		if !hasReq {
			continue
		}
		switch {
		case !hasLim && !overcommitAllowed(name):
			out = append(out, resourceProblem{path + ".resources.limits." + s,
				fmt.Sprintf("container %s requests %s %s with no limit (a resource that cannot be overcommitted needs its limit)", c.Name, req.String(), s)})
		case hasLim && !overcommitAllowed(name) && req.Cmp(lim) != 0:
			out = append(out, resourceProblem{path + ".resources.requests." + s,
				fmt.Sprintf("container %s requests %s %s with a limit of %s (for a resource that cannot be overcommitted they must be equal)", c.Name, req.String(), s, lim.String())})
		case hasLim && req.Cmp(lim) > 0:
			out = append(out, resourceProblem{path + ".resources.requests." + s,
				fmt.Sprintf("container %s requests %s %s, above its limit of %s", c.Name, req.String(), s, lim.String())})
		}
	}
	return out
}

func podResourcesInvalid(c *clusterView) []Finding {
	var out []Finding
	for _, g := range podGroups(&c.rc.Spec) {
		var problems []resourceProblem
		spec := &g.Template.Spec
		for i := range spec.InitContainers {
			problems = append(problems, containerResourceProblems(&spec.InitContainers[i], fmt.Sprintf("initContainers[%d]", i))...)
		}
		for i := range spec.Containers {
			problems = append(problems, containerResourceProblems(&spec.Containers[i], fmt.Sprintf("containers[%d]", i))...)
		}
		if len(problems) == 0 {
			continue
		}
		var texts []string
		for _, p := range problems {
			texts = append(texts, p.text)
		}
		pods := "its head pod"
		if !g.Head {
			pods = "every pod of the group"
		}
		f := c.finding(RulePodResourcesInvalid, state.ClusterRef(c.rc), fmt.Sprintf("%s of %s: %s: the API server refuses %s, so KubeRay never creates one", g.Name, c.what(), strings.Join(texts, "; "), pods),
			"set an extended resource such as nvidia.com/gpu in limits only (the request is copied from it) or equal in both, as a whole number, and no request above its limit",
			map[string]string{"group": g.Name, "problems": fmt.Sprint(len(problems))})
		f.Field = g.field(problems[0].field)
		out = append(out, f)
	}
	return out
}
