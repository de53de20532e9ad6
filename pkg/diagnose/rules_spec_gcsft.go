package diagnose

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleGCSReconnectTimeout: with GCS fault tolerance on, a worker group sets
// RAY_gcs_rpc_server_reconnect_timeout_s to no more than the head's. KubeRay gives workers 600s
// when they set nothing, because "by default, the value is 60s, so the head node will crash if
// the GCS server is down for more than 60s. Typically, the new GCS server will be available in
// 120 seconds" (controllers/ray/common/pod.go, v1.1.1 to v1.6.0). A worker that gives up before
// the head's GCS is back exits, and fault tolerance keeps nothing of it.
const RuleGCSReconnectTimeout = "gcs-reconnect-timeout"

// rayGCSReconnectDefault is Ray's own default of EnvGCSReconnectTimeout, in seconds (the
// comment in KubeRay's pod.go quoted above).
const rayGCSReconnectDefault = 60

// envSeconds is the container's plain value of env name, in seconds; ok is false when it is not
// set (or set from a reference, which the spec does not tell).
func envSeconds(c *corev1.Container, name string) (float64, bool) {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom == nil {
			v, err := strconv.ParseFloat(strings.TrimSpace(e.Value), 64)
			return v, err == nil
		}
	}
	return 0, false
}

func gcsReconnectTimeout(c *clusterView) []Finding {
	if !gcsFTEnabled(c) {
		return nil
	}
	groups := podGroups(&c.rc.Spec)
	if len(groups[0].Template.Spec.Containers) == 0 {
		return nil
	}
	head, set := envSeconds(&groups[0].Template.Spec.Containers[0], ray.EnvGCSReconnectTimeout)
	headShown := fmt.Sprintf("%g", head)
	if !set {
		head, headShown = rayGCSReconnectDefault, fmt.Sprintf("%d (Ray's default)", rayGCSReconnectDefault)
	}
	var out []Finding
	for _, g := range groups[1:] {
		cs := g.Template.Spec.Containers
		if len(cs) == 0 {
			continue
		}
		w, ok := envSeconds(&cs[0], ray.EnvGCSReconnectTimeout)
		if !ok || w > head {
			continue // unset: KubeRay gives the workers 600s
		}
		f := c.finding(RuleGCSReconnectTimeout, state.ClusterRef(c.rc), fmt.Sprintf("%s of %s sets %s to %gs, not above the head's %ss: with GCS fault tolerance on, its raylets exit before a restarted head's GCS is back (KubeRay gives workers 600s: a new GCS typically takes 120s)", g.Name, c.what(), ray.EnvGCSReconnectTimeout, w, headShown),
			fmt.Sprintf("raise %s on the workers' Ray container above the head's, or remove it (KubeRay sets 600s)", ray.EnvGCSReconnectTimeout),
			map[string]string{"group": g.Name, "worker": fmt.Sprintf("%g", w), "head": fmt.Sprintf("%g", head)})
		f.Field = g.field("containers[0].env")
		out = append(out, f)
	}
	return out
}
