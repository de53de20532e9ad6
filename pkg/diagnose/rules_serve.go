package diagnose

import (
	"fmt"
	"strconv"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// serveRules are the causes of 502s while a RayService's head recovers (seed 003,
// failure-modes row 9). They apply to clusters a RayService owns.
func serveRules(ix *index, c *clusterView) []Finding {
	if c.service == nil {
		return nil
	}
	return serveHeadInService(ix, c)
}

// RayServiceSpecRule says whether rule is a spec rule that only applies to clusters a RayService
// owns (junit skips it on the others).
func RayServiceSpecRule(rule string) bool {
	switch rule {
	case RuleServeHeadHasCPUs, RuleGCSFTOff, RuleServeHeadNotExcluded, RuleServeConfigInvalid, RuleServeConfigCamelCase:
		return true
	}
	return false
}

// serveSpecRules are the same causes read from the spec alone (scope "spec"): what the head
// offers Serve, and whether the cluster survives a head restart.
func serveSpecRules(c *clusterView) []Finding {
	if c.service == nil {
		return nil
	}
	out := serveHeadHasCPUs(c)
	if !gcsFTEnabled(c) {
		f := c.finding(RuleGCSFTOff, state.ClusterRef(c.rc), fmt.Sprintf("%s runs without GCS fault tolerance: when the head restarts, workers and Serve replicas restart with it", c.what()),
			"enable GCS fault tolerance: spec.rayClusterConfig.gcsFaultToleranceOptions with an external Redis (KubeRay v1.3.0+), or the annotation ray.io/ft-enabled: \"true\"",
			map[string]string{"gcsFaultTolerance": "off"})
		f.Field = "spec.gcsFaultToleranceOptions"
		out = append(out, f)
	}
	return out
}

func serveHeadInService(ix *index, c *clusterView) []Finding {
	rs := c.service
	if rs.Spec.ExcludeHeadPodFromServeSvc || !ix.s.CanSee("services") {
		return nil
	}
	svcName := ray.ServeServiceName(rs.Name)
	svc := ix.services[key(rs.Namespace, svcName)]
	if svc == nil || len(svc.Spec.Selector) == 0 {
		return nil
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	var out []Finding
	for _, h := range c.liveHeads() {
		if !sel.Matches(labels.Set(h.Labels)) {
			continue
		}
		ev := map[string]string{"service": svcName, "pod": h.Name, "selector": sel.String()}
		out = append(out, c.finding(RuleServeHeadInService, state.Ref{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name, UID: string(svc.UID)}, fmt.Sprintf("serve Service %s sends traffic to head pod %s: requests in flight on the head's proxy fail with 502 when the head restarts (kuberay #1153)", svcName, h.Name),
			"set spec.excludeHeadPodFromServeSvc: true on RayService "+rs.Name+" (KubeRay v1.3.0+), and retry requests in clients", ev))
	}
	return out
}

// headNumCPUs is the CPU count Ray advertises on the head: headGroupSpec.resources["CPU"]
// overrides rayStartParams["num-cpus"]; "" means unset (Ray uses the container's CPUs).
func headNumCPUs(spec *rayv1.RayClusterSpec) string {
	if v, ok := spec.HeadGroupSpec.Resources["CPU"]; ok {
		return v
	}
	return spec.HeadGroupSpec.RayStartParams["num-cpus"]
}

func serveHeadHasCPUs(c *clusterView) []Finding {
	v := strings.Trim(strings.TrimSpace(headNumCPUs(&c.rc.Spec)), `"'`)
	if f, err := strconv.ParseFloat(v, 64); err == nil && f == 0 {
		return nil
	}
	shown := v
	if v == "" {
		shown = "unset (Ray counts the container's CPUs)"
	}
	f := c.finding(RuleServeHeadHasCPUs, state.ClusterRef(c.rc), fmt.Sprintf("head of %s advertises num-cpus %s, so Serve replicas can run on the head and die with it", c.what(), shown),
		`set rayClusterConfig.headGroupSpec.rayStartParams.num-cpus: "0" on RayService `+c.service.Name,
		map[string]string{"numCpus": orNone(v)})
	f.Field = "spec.headGroupSpec.rayStartParams.num-cpus"
	if _, ok := c.rc.Spec.HeadGroupSpec.Resources["CPU"]; ok {
		f.Field = "spec.headGroupSpec.resources.CPU"
	}
	return []Finding{f}
}

// gcsFTEnabled reads either switch, on the cluster or on the RayService that generates it.
func gcsFTEnabled(c *clusterView) bool {
	if c.rc.Spec.GcsFaultToleranceOptions != nil || strings.EqualFold(c.rc.Annotations[ray.AnnotationFTEnabled], "true") {
		return true
	}
	if rs := c.service; rs != nil {
		return rs.Spec.RayClusterSpec.GcsFaultToleranceOptions != nil || strings.EqualFold(rs.Annotations[ray.AnnotationFTEnabled], "true")
	}
	return false
}
