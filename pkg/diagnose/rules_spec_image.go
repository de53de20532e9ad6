package diagnose

import (
	"fmt"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleImageRayVersion: a group's Ray image names another Ray version in its tag than
// spec.rayVersion. KubeRay builds commands from spec.rayVersion ("RayVersion is used to determine
// the command for the Kubernetes Job managed by RayJob", raycluster_types.go; common.BuildPod
// takes it too), so the operator plans for one Ray and the pods run another. An image without
// a version in its tag (latest, nightly, a digest, a custom tag) is not judged.
const RuleImageRayVersion = "image-ray-version"

func imageRayVersionRules(c *clusterView) []Finding {
	want := strings.TrimPrefix(strings.TrimSpace(c.rc.Spec.RayVersion), "v")
	if want == "" {
		return nil
	}
	var out []Finding
	for _, g := range podGroups(&c.rc.Spec) {
		cs := g.Template.Spec.Containers
		if len(cs) == 0 || !looksLikeRay(cs[0].Image) {
			continue
		}
		got := imageRayVersion(cs[0].Image)
		if got == "" || got == want {
			continue
		}
		f := c.finding(RuleImageRayVersion, state.ClusterRef(c.rc), fmt.Sprintf("%s of %s runs image %s (Ray %s) while spec.rayVersion is %s: KubeRay builds the pods' and the RayJob's commands for %s", g.Name, c.what(), cs[0].Image, got, c.rc.Spec.RayVersion, c.rc.Spec.RayVersion),
			"set spec.rayVersion to the Ray version of the image, or the image to spec.rayVersion; one Ray version in every group",
			map[string]string{"group": g.Name, "image": cs[0].Image, "imageRayVersion": got, "rayVersion": c.rc.Spec.RayVersion})
		f.Field = g.field("containers[0].image")
		out = append(out, f)
	}
	return out
}
