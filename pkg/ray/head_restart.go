package ray

import (
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/version"
)

var (
	// RestartAnnotationVersion is the first release whose reconcilePods honours
	// AnnotationDisableProvisionedHeadRestart (shouldSkipHeadPodRestart, kuberay #4234).
	RestartAnnotationVersion = version.MustParseSemantic("v1.6.0")
	// rayJobNoRestartVersion: v1.5.x skips the head of every provisioned RayJob cluster,
	// whatever its submission mode (kuberay #4141, #4156; called a breaking change in #4176).
	rayJobNoRestartVersion = version.MustParseSemantic("v1.5.0")
)

// HeadRestartDisabled reports whether the running operators create no new head for rc once its
// head is gone, and why. It reads what reconcilePods reads: the RayClusterProvisioned condition,
// the annotation (v1.6+) or, on v1.5.x, the RayJob origin label. An operator whose version
// cannot be read is taken to honour the annotation: it is the cluster owner's stated intent.
func HeadRestartDisabled(rc *rayv1.RayCluster, ops []Operator) (why string, disabled bool) {
	if !meta.IsStatusConditionTrue(rc.Status.Conditions, string(rayv1.RayClusterProvisioned)) {
		return "", false // not provisioned yet: every version creates the head
	}
	annotated := rc.Annotations[AnnotationDisableProvisionedHeadRestart] == "true"
	fromJob := rc.Labels[LabelOriginatedFromCRD] == "RayJob"
	known := false
	for _, op := range ops {
		if op.ReadyReplicas == 0 {
			continue
		}
		v, err := version.ParseSemantic(op.Version)
		if err != nil {
			continue
		}
		known = true
		switch {
		case annotated && !v.LessThan(RestartAnnotationVersion):
			return fmt.Sprintf("KubeRay %s creates no new head for a provisioned RayCluster annotated %s=true (kuberay #4234)",
				op.Version, AnnotationDisableProvisionedHeadRestart), true
		case fromJob && !v.LessThan(rayJobNoRestartVersion) && v.LessThan(RestartAnnotationVersion):
			return fmt.Sprintf("KubeRay %s creates no new head for a provisioned RayCluster made by a RayJob (label %s=RayJob; kuberay #4141, narrowed to SidecarMode in v1.6.0 by #4234)",
				op.Version, LabelOriginatedFromCRD), true
		}
	}
	if annotated && !known {
		return fmt.Sprintf("the RayCluster is annotated %s=true: KubeRay v1.6+ creates no new head once it is provisioned (kuberay #4234)",
			AnnotationDisableProvisionedHeadRestart), true
	}
	return "", false
}

// restartDisabled is HeadRestartDisabled for a cluster of the snapshot.
