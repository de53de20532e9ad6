package diagnose

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
)

// RuleServeReplicaFitsNoGroup: a Serve deployment of serveConfigV2 declares, per replica, more
// of a resource (ray_actor_options num_cpus, num_gpus, memory or a custom resource) than any
// group of the RayService's cluster advertises to Ray. Ray can never place such a replica: Serve
// keeps the application DEPLOYING, the RayService never turns ready, and an upgrade to this spec
// never switches traffic; with the autoscaler on, Ray reports the demand infeasible (the live
// rule ray-demand-infeasible). What a group advertises is what KubeRay passes to ray start
// (generateRayStartCommand in common/pod.go, v1.1.1 to v1.6.0): rayStartParams num-cpus, memory,
// num-gpus and resources, overridden by the group's resources field (v1.5.0+,
// updateRayStartParamsResources), else the Ray container's limits: cpu rounded up, memory, and a
// limit whose name ends in gpu. A group whose amount of a resource cannot be read from the spec
// (a CPU request without a limit, which v1.1.1 does not pass on) is taken to hold it: the rule
// speaks only when every group's amount is known.
const RuleServeReplicaFitsNoGroup = "serve-replica-fits-no-group"

// serveDemand is what one replica of a Serve deployment asks Ray for.
type serveDemand struct {
	app, deployment string
	need            map[string]float64 // Ray's resource names: CPU, GPU, memory, custom ones
}

func serveReplicaFitsNoGroup(ix *index, c *clusterView) []Finding {
	rs := c.service
	if rs == nil || !ix.serviceSpecHolder(c) || strings.TrimSpace(rs.Spec.ServeConfigV2) == "" {
		return nil
	}
	demands := serveDemands(rs.Spec.ServeConfigV2)
	if len(demands) == 0 {
		return nil
	}
	groups := servingGroups(&c.rc.Spec)
	var lines []string
	for _, d := range demands {
		if fitsSomeGroup(d, groups) {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s/%s (%s per replica)", d.app, d.deployment, describeNeed(d.need)))
	}
	if len(lines) == 0 {
		return nil
	}
	asked := map[string]bool{}
	for _, d := range demands {
		for name := range d.need {
			asked[name] = true
		}
	}
	var have []string
	for _, g := range groups {
		have = append(have, g.name+": "+describeHave(g, asked))
	}
	f := c.finding(RuleServeReplicaFitsNoGroup, serviceRef(rs),
		fmt.Sprintf("RayService %s/%s: no group of its RayCluster can hold one replica of Serve deployment %s; the groups advertise %s: Ray never places such a replica, Serve keeps the application DEPLOYING and the RayService never turns ready",
			rs.Namespace, rs.Name, strings.Join(lines, "; "), strings.Join(have, "; ")),
		"give a worker group what a replica asks for (rayStartParams num-cpus, num-gpus, memory or resources, or the Ray container's limits, which KubeRay passes to ray start), or lower the deployment's ray_actor_options",
		map[string]string{"deployments": fmt.Sprint(len(lines))})
	f.Field = "spec.serveConfigV2"
	return []Finding{f}
}

// serveDemands reads each deployment's declared ray_actor_options. A deployment with placement
// group bundles is left out (its bundles, not its actor options, decide where it goes), and so is
// a config that does not parse (serve-config-invalid says so).
func serveDemands(config string) []serveDemand {
	var doc struct {
		Applications []struct {
			Name        string `yaml:"name"`
			Deployments []struct {
				Name            string         `yaml:"name"`
				RayActorOptions map[string]any `yaml:"ray_actor_options"`
				Bundles         []any          `yaml:"placement_group_bundles"`
			} `yaml:"deployments"`
		} `yaml:"applications"`
	}
	if yaml.Unmarshal([]byte(config), &doc) != nil {
		return nil
	}
	var out []serveDemand
	for _, a := range doc.Applications {
		for _, d := range a.Deployments {
			if len(d.Bundles) > 0 {
				continue
			}
			need := map[string]float64{}
			for key, name := range map[string]string{"num_cpus": "CPU", "num_gpus": "GPU", "memory": "memory"} {
				if v, ok := number(d.RayActorOptions[key]); ok && v > 0 {
					need[name] = v
				}
			}
			if custom, ok := d.RayActorOptions["resources"].(map[string]any); ok {
				for name, v := range custom {
					if n, ok := number(v); ok && n > 0 {
						need[name] = n
					}
				}
			}
			if len(need) > 0 {
				out = append(out, serveDemand{app: a.Name, deployment: d.Name, need: need})
			}
		}
	}
	return out
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case float64:
		return n, true
	case string:
		f, err := strconv.ParseFloat(n, 64)
		return f, err == nil
	}
	return 0, false
}

// servingGroup is a group that can run Serve replicas, and what it advertises to Ray: a resource
// absent from has is one it has none of; unknown lists those the spec does not tell.
type servingGroup struct {
	name    string
	has     map[string]float64
	unknown map[string]bool
}

// servingGroups are the head and the worker groups that may have pods (replicas or maxReplicas
// above zero).
func servingGroups(spec *rayv1.RayClusterSpec) []servingGroup {
	var out []servingGroup
	for i, g := range podGroups(spec) {
		if !g.Head {
			w := spec.WorkerGroupSpecs[i-1]
			if g.Replicas == 0 && (w.MaxReplicas == nil || *w.MaxReplicas == 0) {
				continue
			}
		}
		var overrides map[string]string
		if g.Head {
			overrides = spec.HeadGroupSpec.Resources
		} else {
			overrides = spec.WorkerGroupSpecs[i-1].Resources
		}
		out = append(out, advertised(g, overrides))
	}
	return out
}

// advertised is what KubeRay tells ray start a pod of g has.
func advertised(g podGroup, overrides map[string]string) servingGroup {
	sg := servingGroup{name: g.Name, has: map[string]float64{}, unknown: map[string]bool{}}
	params := map[string]string{}
	for k, v := range g.RayStartParams {
		params[k] = strings.Trim(strings.TrimSpace(v), `"'`)
	}
	for name, q := range overrides { // updateRayStartParamsResources, v1.5.0+
		qty, err := resource.ParseQuantity(q)
		if err != nil {
			continue
		}
		switch n := strings.ToLower(name); {
		case n == "cpu":
			params["num-cpus"] = strconv.FormatInt(qty.Value(), 10)
		case n == "memory":
			params["memory"] = strconv.FormatInt(qty.Value(), 10)
		case strings.HasSuffix(n, "gpu"):
			params["num-gpus"] = strconv.FormatInt(qty.Value(), 10)
		default:
			sg.has[name] = qty.AsApproximateFloat64()
		}
	}
	var limits corev1.ResourceList
	if cs := g.Template.Spec.Containers; len(cs) > 0 {
		limits = cs[0].Resources.Limits
	}
	set := func(ray, param string, fromLimit func() (float64, bool)) {
		if v, ok := params[param]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				sg.has[ray] = f
				return
			}
			sg.unknown[ray] = true
			return
		}
		if f, ok := fromLimit(); ok {
			sg.has[ray] = f
			return
		}
		sg.unknown[ray] = true
	}
	set("CPU", "num-cpus", func() (float64, bool) {
		if q, ok := limits[corev1.ResourceCPU]; ok && !q.IsZero() {
			return float64(q.Value()), true // Value rounds up, as KubeRay's does
		}
		return 0, false // a request alone: v1.5.0+ passes it on, v1.1.1 lets Ray count the node's
	})
	set("memory", "memory", func() (float64, bool) {
		if q, ok := limits[corev1.ResourceMemory]; ok && !q.IsZero() {
			return float64(q.Value()), true
		}
		return 0, false
	})
	set("GPU", "num-gpus", func() (float64, bool) {
		for name, q := range limits {
			if strings.HasSuffix(string(name), "gpu") && !q.IsZero() {
				return float64(q.Value()), true
			}
		}
		if visibleGPUs(g.Template) {
			return 0, false // the runtime shows it the node's GPUs without a limit: Ray counts them
		}
		return 0, true // no GPU given to the container: Ray finds none
	})
	if v, ok := params["resources"]; ok {
		var custom map[string]float64
		if json.Unmarshal([]byte(strings.ReplaceAll(v, `\"`, `"`)), &custom) == nil {
			for k, n := range custom {
				sg.has[k] = n
			}
		} else {
			sg.unknown["custom"] = true
		}
	}
	return sg
}

// visibleGPUs: the Ray container asks the NVIDIA runtime for GPUs by environment, not by a limit.
func visibleGPUs(t *corev1.PodTemplateSpec) bool {
	if len(t.Spec.Containers) == 0 {
		return false
	}
	for _, e := range t.Spec.Containers[0].Env {
		if e.Name == "NVIDIA_VISIBLE_DEVICES" && e.Value != "" && e.Value != "void" && e.Value != "none" {
			return true
		}
	}
	return false
}

// fitsSomeGroup: some group holds d's replica, or cannot be shown not to.
func fitsSomeGroup(d serveDemand, groups []servingGroup) bool {
	for _, g := range groups {
		fits := true
		for name, n := range d.need {
			if g.unknown[name] || (g.unknown["custom"] && name != "CPU" && name != "GPU" && name != "memory") {
				continue
			}
			if g.has[name] < n {
				fits = false
				break
			}
		}
		if fits {
			return true
		}
	}
	return false
}

func describeNeed(need map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(need)) {
		parts = append(parts, k+" "+amount(k, need[k]))
	}
	return strings.Join(parts, ", ")
}

// describeHave is what g advertises of the resources asked for.
func describeHave(g servingGroup, asked map[string]bool) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(asked)) {
		switch {
		case g.unknown[k]:
			parts = append(parts, k+" unknown")
		default:
			parts = append(parts, k+" "+amount(k, g.has[k]))
		}
	}
	return strings.Join(parts, ", ")
}

// amount shows memory in binary units and counts as numbers.
func amount(name string, v float64) string {
	if name == "memory" {
		return resource.NewQuantity(int64(math.Ceil(v)), resource.BinarySI).String()
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
