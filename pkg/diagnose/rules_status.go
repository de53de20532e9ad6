package diagnose

import (
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// statusStale: the RayCluster claims ready while no head is Running and Ready. Tools and people
// that trust .status.state are misled (kuberay #2188).
func statusStale(ix *index, c *clusterView) []Finding {
	if c.rc.DeletionTimestamp != nil {
		return nil // the operator removes the head on purpose; its status is on its way out too
	}
	var claims []string
	if c.rc.Status.State == rayv1.Ready {
		claims = append(claims, "state="+string(rayv1.Ready))
	}
	if meta.IsStatusConditionTrue(c.rc.Status.Conditions, string(rayv1.HeadPodReady)) {
		claims = append(claims, string(rayv1.HeadPodReady)+"=True")
	}
	if len(claims) == 0 {
		return nil
	}
	var seen []string
	for _, h := range c.heads {
		if ray.RunningReady(h) {
			return nil
		}
		seen = append(seen, h.Name+" "+podState(h))
	}
	head := "it has no head pod"
	if len(seen) > 0 {
		head = "its head pod " + strings.Join(seen, ", ")
	}
	ev := map[string]string{"status": strings.Join(claims, ",")}
	return []Finding{c.finding(RuleStatusStale, state.ClusterRef(c.rc), fmt.Sprintf("%s reports ready (%s) but %s", c.what(), strings.Join(claims, ", "), head),
		"do not trust .status.state of this cluster: act on the head finding; the status is corrected when the operator reconciles it", ev)}
}
