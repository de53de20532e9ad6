package diagnose

import (
	"errors"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// v15Line is the KubeRay releases whose default feature gates turn RayJobDeletionPolicy off.
var v15Line = releaseSpan{From: version.MustParseSemantic("v1.5.0"), Fixed: version.MustParseSemantic("v1.6.0")}

// v15Release is the release of v15Line whose validation was read.
const v15Release = "v1.5.0"

// v15GatedRefusal is what a KubeRay v1.5 operator with its default feature gates refuses and the
// validation this doctor runs accepts: v1.5.0 turns RayJobDeletionPolicy off (v1.6.0 on), and
// then refuses a RayJob's deletionStrategy (validateDeletionConfiguration) and a suspended
// worker group (ValidateRayClusterSpec). The v1.5 line's code is not in this build (one release
// of the module is), so its two gated checks are read from v1.5.0's validation.go and its Event
// formats from its reconcilers; nil when neither applies.
func v15GatedRefusal(ix *index, c *clusterView) *validationRefusal {
	refusal := func(ref state.Ref, reason, event string, err error) *validationRefusal {
		return &validationRefusal{obj: ref, reason: reason, event: event, err: err, as: v15Release}
	}
	switch {
	case c.service != nil:
		rs := c.service
		if err := suspendedGroup(&rs.Spec.RayClusterSpec); err != nil {
			return refusal(serviceRef(rs), string(utils.InvalidRayServiceSpec), fmt.Sprintf("The RayService spec is invalid %s/%s: %v", rs.Namespace, rs.Name, err), err)
		}
	case c.owner != nil && c.owner.Kind == "RayJob":
		j := ix.ownerJob(c)
		if j == nil {
			return nil
		}
		ref := state.Ref{Kind: "RayJob", Namespace: j.Namespace, Name: j.Name, UID: string(j.UID)}
		var err error
		if j.Spec.RayClusterSpec != nil {
			err = suspendedGroup(j.Spec.RayClusterSpec) // ValidateRayClusterSpec runs first
		}
		if err == nil && j.Spec.DeletionStrategy != nil {
			err = errors.New("RayJobDeletionPolicy feature gate must be enabled to use DeletionStrategy")
		}
		if err != nil {
			return refusal(ref, string(utils.InvalidRayJobSpec), fmt.Sprintf("%s/%s: %v", j.Namespace, j.Name, err), err)
		}
	case c.owner == nil:
		if err := suspendedGroup(&c.rc.Spec); err != nil {
			return refusal(state.ClusterRef(c.rc), eventInvalidSpec, fmt.Sprintf("The RayCluster spec is invalid %s/%s: %v", c.rc.Namespace, c.rc.Name, err), err)
		}
	}
	return nil
}

// suspendedGroup is v1.5.0's refusal of a suspended worker group with RayJobDeletionPolicy off.
func suspendedGroup(spec *rayv1.RayClusterSpec) error {
	for _, w := range spec.WorkerGroupSpecs {
		if w.Suspend != nil && *w.Suspend {
			return fmt.Errorf("worker group %s can be suspended only when the RayJobDeletionPolicy feature gate is enabled", w.GroupName)
		}
	}
	return nil
}
