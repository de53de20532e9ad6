package diagnose

import (
	"errors"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// v17Release is the release whose validation v17GatedRefusal reads: KubeRay v1.7.0, whose
// module the proxy here does not serve, so its checks are read from its source, not called.
const v17Release = "v1.7.0"

var v17Validation = version.MustParseSemantic(v17Release)

// v17GatedRefusal is what a KubeRay v1.7.0 operator refuses of a cluster spec for a field these
// API types drop (ray.GatedDecl, read from the document): v1.7.0's ValidateRayClusterSpec, in its
// order, refuses a worker group's priority without Ray 2.56.0 and autoscaler v2
// (validateWorkerGroupPriority), a RocksDB GCS store without GCSFaultToleranceEmbeddedStorage
// (validateGcsFaultToleranceBackend), historyServerOptions without RayClusterHistoryServer,
// networkPolicy without RayClusterNetworkPolicy and tlsOptions without RayClusterMTLS; the four
// gates are alpha and off by default, and the operator's --feature-gates are read. nil when the
// operator is not v1.7.0 or later, or accepts what the document declares.
func v17GatedRefusal(ix *index, c *clusterView) *validationRefusal {
	decl, ok := ix.s.GatedDeclared[c.rc.Namespace+"/"+c.rc.Name]
	if !ok || len(ix.operators) != 1 {
		return nil
	}
	if op, known := ix.targetOperator(); !known || version.MustParseSemantic(op).LessThan(v17Validation) {
		return nil
	}
	fix, err := gatedV17(&c.rc.Spec, decl, ix.operators[0])
	if err == nil {
		return nil
	}
	if gateFix, ok := ix.operatorSideFix(err.Error()); ok {
		fix = gateFix + ", or " + fix
	}
	refusal := func(ref state.Ref, reason, event string) *validationRefusal {
		return &validationRefusal{obj: ref, reason: reason, event: event, err: err, as: v17Release, fix: fix}
	}
	switch {
	case c.service != nil:
		rs := c.service
		return refusal(serviceRef(rs), string(utils.InvalidRayServiceSpec), fmt.Sprintf("%s/%s: The RayService spec is invalid: %v", rs.Namespace, rs.Name, err))
	case c.owner != nil && c.owner.Kind == "RayJob":
		j := ix.ownerJob(c)
		if j == nil {
			return nil
		}
		return refusal(state.Ref{Kind: "RayJob", Namespace: j.Namespace, Name: j.Name, UID: string(j.UID)}, string(utils.InvalidRayJobSpec),
			fmt.Sprintf("%s/%s: The RayJob spec is invalid: %v", j.Namespace, j.Name, err))
	case c.owner == nil:
		return refusal(state.ClusterRef(c.rc), eventInvalidSpec, fmt.Sprintf("The RayCluster spec is invalid %s/%s: %v", c.rc.Namespace, c.rc.Name, err))
	}
	return nil
}

// gatedV17 is v1.7.0's first refusal of what spec and decl declare, with op's feature gates (the
// messages are v1.7.0's, word for word), and the fix of the spec: the field to remove, or what the
// priority needs.
func gatedV17(spec *rayv1.RayClusterSpec, decl ray.GatedDecl, op ray.Operator) (specFix string, err error) {
	gate := func(name string) bool { on, _ := op.FeatureGate(name); return on } // all four off by default
	for _, p := range decl.Priorities {
		if err := priorityV17(spec, p); err != nil {
			return "set rayVersion to 2.56.0 or later and autoscalerOptions.version to v2 (the priority is the autoscaler v2's), or remove worker group " +
				p.Group + "'s priority", err
		}
	}
	switch {
	case decl.RocksDB && !gate(ray.FeatureEmbeddedGCSRock):
		return "remove gcsFaultToleranceOptions.backend rocksdb from the spec",
			fmt.Errorf("the embedded RocksDB GCS fault tolerance backend (GcsFaultToleranceOptions.Backend: 'rocksdb') requires the %s feature gate to be enabled", ray.FeatureEmbeddedGCSRock)
	case decl.HistoryServer && !gate(ray.FeatureHistoryServer):
		return "remove historyServerOptions from the spec", errors.New("RayClusterHistoryServer feature gate is not enabled")
	case decl.NetworkPolicy && !gate(ray.FeatureNetworkPolicy):
		return "remove networkPolicy from the spec", errors.New("spec.networkPolicy requires the RayClusterNetworkPolicy feature gate to be enabled")
	case decl.TLS && !gate(ray.FeatureMTLS):
		return "remove tlsOptions from the spec", errors.New("spec.tlsOptions requires the RayClusterMTLS feature gate to be enabled")
	}
	return "", nil
}

// minPriorityRay is the first Ray release whose autoscaler honours a worker group's priority.
var minPriorityRay = version.MustParseGeneric("2.56.0")

// priorityV17 is v1.7.0's validateWorkerGroupPriority for a group whose priority is not 0.
func priorityV17(spec *rayv1.RayClusterSpec, p ray.GroupPriority) error {
	if spec.RayVersion == "" {
		return fmt.Errorf("worker group %s: priority is set, but RayVersion was not specified. Ray version 2.56.0 or later is required", p.Group)
	}
	v, err := version.ParseGeneric(spec.RayVersion)
	if err != nil {
		return fmt.Errorf("worker group %s: priority is set, but RayVersion format is invalid: %s, %w", p.Group, spec.RayVersion, err)
	}
	if v.LessThan(minPriorityRay) {
		return fmt.Errorf("worker group %s: priority is set, but minimum Ray version is 2.56.0, got %s", p.Group, spec.RayVersion)
	}
	if utils.IsAutoscalingV2Enabled(spec) {
		return nil
	}
	if cs := spec.HeadGroupSpec.Template.Spec.Containers; len(cs) > 0 {
		for _, e := range cs[0].Env {
			if e.Name == utils.RAY_ENABLE_AUTOSCALER_V2 && (e.Value == "1" || e.Value == "true") {
				return nil
			}
		}
	}
	return fmt.Errorf("worker group %s: priority is set to %d, but autoscaler v2 is not enabled. Priority is only supported with autoscaler v2 enabled", p.Group, p.Priority)
}
