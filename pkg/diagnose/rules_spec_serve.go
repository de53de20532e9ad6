package diagnose

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"go.yaml.in/yaml/v3"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

const (
	// RuleServeHeadNotExcluded: a RayService without spec.excludeHeadPodFromServeSvc. The serve
	// Service then sends traffic to the head's proxy, and requests in flight there fail with 502
	// when the head restarts (kuberay #1153; the field is KubeRay v1.3.0's, PR #2598). The live
	// rule serve-head-in-service sees it in the Service; this one sees it in the spec.
	RuleServeHeadNotExcluded = "serve-head-not-excluded"
	// RuleServeConfigInvalid: serveConfigV2 is not a YAML mapping. KubeRay unmarshals it into a
	// map before it submits the applications to Serve (updateServeDeployment in
	// rayservice_controller.go, v1.1.1 to v1.6.0) and returns the error: nothing is deployed.
	RuleServeConfigInvalid = "serve-config-invalid"
	// RuleServeConfigCamelCase: serveConfigV2 names a Serve field in camelCase (numReplicas)
	// where Ray Serve's config schema names it in snake_case (num_replicas).
	RuleServeConfigCamelCase = "serve-config-camelcase"
)

// serviceSpecHolder is the cluster that carries the findings about a RayService's own spec, so
// that a RayService with two clusters (an upgrade) is reported once: its first cluster by
// namespace and name.
func (ix *index) serviceSpecHolder(c *clusterView) bool {
	for _, o := range ix.clusters {
		if o.service == c.service {
			return o == c
		}
	}
	return false
}

func serviceRef(rs *rayv1.RayService) state.Ref {
	return state.Ref{Kind: "RayService", Namespace: rs.Namespace, Name: rs.Name, UID: string(rs.UID)}
}

// rayServiceSpecRules read the RayService's own spec; their findings are about the RayService,
// and their fields are relative to it.
func rayServiceSpecRules(ix *index, c *clusterView) []Finding {
	rs := c.service
	if rs == nil || !ix.serviceSpecHolder(c) {
		return nil
	}
	var out []Finding
	if !rs.Spec.ExcludeHeadPodFromServeSvc {
		f := c.finding(RuleServeHeadNotExcluded, serviceRef(rs),
			fmt.Sprintf("RayService %s/%s does not set excludeHeadPodFromServeSvc: its serve Service sends traffic to the head's proxy too, and requests in flight there fail with 502 when the head restarts (kuberay #1153)", rs.Namespace, rs.Name),
			"set spec.excludeHeadPodFromServeSvc: true (KubeRay v1.3.0+) and the head's num-cpus: \"0\", so Serve runs on workers only; retry requests in clients",
			map[string]string{"excludeHeadPodFromServeSvc": "false"})
		f.Field = "spec.excludeHeadPodFromServeSvc"
		out = append(out, f)
	}
	out = append(out, serveConfigRules(c, rs)...)
	out = append(out, serveReplicaFitsNoGroup(ix, c)...)
	return out
}

func serveConfigRules(c *clusterView, rs *rayv1.RayService) []Finding {
	if strings.TrimSpace(rs.Spec.ServeConfigV2) == "" {
		return nil
	}
	var doc yaml.Node
	err := yaml.Unmarshal([]byte(rs.Spec.ServeConfigV2), &doc)
	if err == nil && (len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode) {
		// updateServeDeployment unmarshals it into a map (rayservice_controller.go, every version).
		err = fmt.Errorf("it is not a mapping of Serve's fields")
	}
	if err != nil {
		f := c.finding(RuleServeConfigInvalid, serviceRef(rs),
			fmt.Sprintf("RayService %s/%s: serveConfigV2 is not YAML (%s): the operator cannot read it and deploys no application", rs.Namespace, rs.Name, strings.TrimPrefix(err.Error(), "yaml: ")),
			"fix the YAML of spec.serveConfigV2 (it is a string: write it as a block scalar, serveConfigV2: |, indented under it)",
			map[string]string{"error": err.Error()})
		f.Field = "spec.serveConfigV2"
		return []Finding{f}
	}
	var camel []string
	walkServeKeys(&doc, "", func(path, key string) {
		if snake := snakeCase(key); snake != key && serveFields[snake] {
			camel = append(camel, fmt.Sprintf("%s (Ray Serve reads %s)", strings.TrimPrefix(path+"."+key, "."), snake))
		}
	})
	if len(camel) == 0 {
		return nil
	}
	sort.Strings(camel)
	f := c.finding(RuleServeConfigCamelCase, serviceRef(rs),
		fmt.Sprintf("RayService %s/%s: serveConfigV2 names Serve fields in camelCase: %s; Serve's config schema names them in snake_case, so these are not the settings they look like", rs.Namespace, rs.Name, strings.Join(camel, ", ")),
		"write serveConfigV2's fields in snake_case, as in `serve build` output and Ray Serve's config reference (num_replicas, route_prefix, import_path, ray_actor_options)",
		map[string]string{"fields": fmt.Sprint(len(camel))})
	f.Field = "spec.serveConfigV2"
	return []Finding{f}
}

// walkServeKeys calls fn with each mapping key of n and its path, but not inside the values
// users name themselves: user_config, runtime_env, args (an application's arguments).
func walkServeKeys(n *yaml.Node, path string, fn func(path, key string)) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, ch := range n.Content {
			p := path
			if n.Kind == yaml.SequenceNode {
				p = fmt.Sprintf("%s[%d]", path, i)
			}
			walkServeKeys(ch, p, fn)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			fn(path, k)
			switch snakeCase(k) {
			case "user_config", "runtime_env", "args":
				continue
			}
			walkServeKeys(n.Content[i+1], path+"."+k, fn)
		}
	}
}

var camelHump = regexp.MustCompile(`([a-z0-9])([A-Z])`)

// snakeCase is numReplicas as num_replicas.
func snakeCase(s string) string {
	return strings.ToLower(camelHump.ReplaceAllString(s, "${1}_${2}"))
}

// serveFields are the fields of Ray Serve's config file (ServeDeploySchema, its applications and
// deployments, ray_actor_options and autoscaling_config) whose names have an underscore: the
// ones a camelCase spelling can miss.
var serveFields = map[string]bool{
	"http_options": true, "grpc_options": true, "proxy_location": true, "logging_config": true,
	"route_prefix": true, "import_path": true, "runtime_env": true, "external_scaler_enabled": true,
	"num_replicas": true, "ray_actor_options": true, "max_ongoing_requests": true, "max_queued_requests": true,
	"max_concurrent_queries": true, "user_config": true, "autoscaling_config": true,
	"graceful_shutdown_wait_loop_s": true, "graceful_shutdown_timeout_s": true, "health_check_period_s": true,
	"health_check_timeout_s": true, "max_replicas_per_node": true, "placement_group_bundles": true,
	"placement_group_strategy": true, "num_cpus": true, "num_gpus": true, "object_store_memory": true,
	"min_replicas": true, "max_replicas": true, "initial_replicas": true, "target_ongoing_requests": true,
	"upscale_delay_s": true, "downscale_delay_s": true, "request_timeout_s": true, "keep_alive_timeout_s": true,
	"working_dir": true, "py_modules": true, "env_vars": true, "grpc_servicer_functions": true,
}
