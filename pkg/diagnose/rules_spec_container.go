package diagnose

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

const (
	// RuleMemoryRequestNotLimit: a Ray container requests memory but its limit is missing or
	// different. KubeRay tells Ray the container's memory LIMIT (ray start --memory, from
	// resources.limits in common/pod.go), while the scheduler places the pod by its request: Ray
	// then plans on memory the node may not have. KubeRay's ray-cluster.complete.yaml sample:
	// "We also recommend setting requests equal to limits for both CPU and memory."
	RuleMemoryRequestNotLimit = "memory-request-not-limit"
	// RuleRayContainerNotFirst: KubeRay runs Ray in containers[0] of each group's pod
	// (utils.RayContainerIndex): its command, its ports, its probes and its resources. A pod whose
	// first container is a sidecar and whose Ray image is further down starts Ray in the sidecar.
	RuleRayContainerNotFirst = "ray-container-not-first"
	// RuleRayResourcesBuiltin: rayStartParams.resources names CPU, GPU, memory or
	// object_store_memory. ray start refuses each ("cannot be a custom resource because it is one
	// of the default resources": RayParams._check_usage in Ray's _private/parameter.py), so the
	// Ray container exits and the pod crash-loops.
	RuleRayResourcesBuiltin = "ray-resources-builtin"
)

func rayContainerRules(c *clusterView) []Finding {
	var out []Finding
	for _, g := range podGroups(&c.rc.Spec) {
		spec := admittedPodSpec(g.Template)
		if len(spec.Containers) == 0 {
			continue
		}
		out = append(out, memoryRequestNotLimit(c, g, &spec.Containers[0])...)
		out = append(out, rayContainerNotFirst(c, g, spec.Containers)...)
		out = append(out, rayResourcesBuiltin(c, g)...)
	}
	return out
}

func memoryRequestNotLimit(c *clusterView, g podGroup, ray *corev1.Container) []Finding {
	req, hasReq := ray.Resources.Requests[corev1.ResourceMemory]
	if !hasReq {
		return nil // a limit alone is also the request (admittedPodSpec); neither is not this rule's
	}
	lim, hasLim := ray.Resources.Limits[corev1.ResourceMemory]
	if hasLim && lim.Cmp(req) == 0 {
		return nil
	}
	ev := map[string]string{"group": g.Name, "container": ray.Name, "request": req.String(), "limit": "none"}
	what := "no memory limit, so KubeRay tells Ray nothing and Ray counts the node's memory"
	if hasLim {
		ev["limit"] = lim.String()
		what = fmt.Sprintf("a memory limit of %s, which KubeRay tells Ray, while the scheduler reserves only the request", lim.String())
	}
	f := c.finding(RuleMemoryRequestNotLimit, state.ClusterRef(c.rc), fmt.Sprintf("%s of %s: Ray container %s requests %s of memory but has %s: Ray can schedule more work than the node holds, and the kernel or the kubelet ends it", g.Name, c.what(), ray.Name, req.String(), what),
		"set the Ray container's memory request equal to its limit (KubeRay's ray-cluster.complete.yaml sample recommends requests equal to limits for CPU and memory)", ev)
	f.Field = g.field("containers[0].resources.limits.memory")
	return []Finding{f}
}

// looksLikeRay: the image's repository name starts with "ray" (rayproject/ray, rayproject/ray-ml,
// a mirror's .../ray:2.9.0).
func looksLikeRay(image string) bool {
	repo := image
	if i := strings.IndexAny(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndex(repo, "/"); i >= 0 {
		repo = repo[i+1:]
	}
	if i := strings.Index(repo, ":"); i >= 0 {
		repo = repo[:i]
	}
	return strings.HasPrefix(repo, "ray")
}

func rayContainerNotFirst(c *clusterView, g podGroup, cs []corev1.Container) []Finding {
	if looksLikeRay(cs[0].Image) {
		return nil
	}
	for i := 1; i < len(cs); i++ {
		if !looksLikeRay(cs[i].Image) {
			continue
		}
		ev := map[string]string{"group": g.Name, "first": cs[0].Name, "firstImage": cs[0].Image, "rayContainer": cs[i].Name, "rayImage": cs[i].Image}
		f := c.finding(RuleRayContainerNotFirst, state.ClusterRef(c.rc), fmt.Sprintf("%s of %s: the first container is %s (%s) and the Ray image is in container %d, %s: KubeRay runs ray start, its ports, probes and resources in the first container", g.Name, c.what(), cs[0].Name, cs[0].Image, i, cs[i].Name),
			"move the Ray container to the top of the containers list; sidecars go after it", ev)
		f.Field = g.field("containers[0]")
		return []Finding{f}
	}
	return nil
}

// builtinResource matches CPU, GPU or memory as a key of rayStartParams.resources once its
// quoting is removed: '"{\"CPU\": 1}"' is {CPU: 1}.
var builtinResource = regexp.MustCompile(`[{,]\s*(CPU|GPU|memory|object_store_memory)\s*:`)

func rayResourcesBuiltin(c *clusterView, g podGroup) []Finding {
	v, ok := g.RayStartParams["resources"]
	if !ok {
		return nil
	}
	bare := strings.NewReplacer(`\`, "", `"`, "", `'`, "").Replace(v)
	var names []string
	for _, m := range builtinResource.FindAllStringSubmatch(bare, -1) {
		names = append(names, m[1])
	}
	if len(names) == 0 {
		return nil
	}
	f := c.finding(RuleRayResourcesBuiltin, state.ClusterRef(c.rc), fmt.Sprintf("%s of %s: rayStartParams.resources names %s, which Ray refuses as custom resources: ray start fails and the pod never joins", g.Name, c.what(), strings.Join(names, ", ")),
		"remove them from rayStartParams.resources and use num-cpus, num-gpus and memory in rayStartParams (or the container's limits, which KubeRay passes on)",
		map[string]string{"group": g.Name, "resources": strings.Join(names, ",")})
	f.Field = g.Path + ".rayStartParams.resources"
	return []Finding{f}
}
