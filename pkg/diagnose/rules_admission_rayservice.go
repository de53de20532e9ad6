package diagnose

import (
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// rayServiceApply is exists-in-cluster for a RayService: what KubeRay's hash says an apply of
// the document does (ray.JudgeApply), and whether it prepares a new RayCluster; when it cannot be
// judged, what KubeRay does in each case, and the admission rules judge a new cluster.
func rayServiceApply(ix *index, c *clusterView, e *state.Existing, what string, spec *rayv1.RayClusterSpec, obj state.Ref, ev map[string]string) (Finding, bool) {
	active := e.ActiveCluster
	if active == "" {
		active = "(none yet)"
	}
	head := what + " exists, its active RayCluster " + active
	verdict, why := ray.VerdictUnknown, "neither its pending nor its active RayCluster is among the namespace's RayClusters"
	release, known := ix.targetOperator()
	undecoded := undecodedUnder(ix.s.Undecoded[state.UndecodedKey("RayService", e.Namespace, e.Name)], "spec.rayClusterConfig")
	switch {
	case e.Compared == nil:
	case len(undecoded) > 0:
		why = "the document sets " + strings.Join(undecoded, ", ") + ", which KubeRay " + ray.APITypesRelease + "'s types, the newest this doctor reads, do not hold, so its hash cannot be computed"
	case !known:
		why = "the KubeRay release that would run it is not known"
	default:
		verdict, why = ray.JudgeApply(spec, e.Compared, release)
	}
	upgradeRemedy := "if the quota or the nodes cannot hold both clusters, set spec.upgradeStrategy.type: None (the cluster is then updated in place, with the downtime of a restart) or make room first"
	var msg, remedy string
	compared, hash := "", ""
	if e.Compared != nil {
		compared = "active cluster " + e.Compared.Name
		if e.Compared.Pending {
			compared = "pending cluster " + e.Compared.Name
		}
		hash = " (KubeRay " + release + "'s " + ray.AnnotationClusterHash + ", computed on the spec as the API server would store it, its CRD's defaults applied)"
	}
	switch verdict {
	case ray.VerdictUnchanged:
		ev["verdict"] = "unchanged"
		msg = head + ": the document's spec.rayClusterConfig has the hash of its " + compared + hash + ", so an apply prepares no new RayCluster: changed worker replicas go to " + e.Compared.Name + " in place, and no pod is created to judge"
		remedy = "nothing to do before the apply"
	case ray.VerdictAppended:
		ev["verdict"] = "in-place"
		msg = head + ": the document's spec.rayClusterConfig, less the worker groups appended at its end, has the hash of its " + compared + hash + ", so KubeRay updates " + e.Compared.Name + " in place and adds those groups' workers to it, with no new RayCluster; their pods are not judged here"
		remedy = fmt.Sprintf("kubectl ray doctor rayservice/%s -n %s checks the new groups' workers once applied", e.Name, e.Namespace)
	case ray.VerdictNewCluster:
		ev["verdict"] = "new-cluster"
		msg = head + ": the document's spec.rayClusterConfig does not have the hash of its " + compared + hash + ", so KubeRay prepares a new RayCluster beside it (zero-downtime upgrade, unless upgradeStrategy.type is None or the operator runs with ENABLE_ZERO_DOWNTIME=false), both counted against the quota until the switch; the admission rules judge that new cluster with the active one counted"
		remedy = upgradeRemedy
	default:
		ev["verdict"] = "unknown"
		msg = head + ": an apply that changes spec.rayClusterConfig beyond worker replicas and worker groups appended at the end makes KubeRay prepare a new RayCluster beside it (zero-downtime upgrade, unless upgradeStrategy.type is None or the operator runs with ENABLE_ZERO_DOWNTIME=false), both counted against the quota until the switch; the admission rules judge that new cluster with the active one counted. Any other change updates the active cluster in place, and creates no pod to judge (not judged for this document: " + why + ")"
		remedy = upgradeRemedy
	}
	return c.finding(RuleExistsInCluster, obj, msg, remedy, ev), verdict == ray.VerdictNewCluster || verdict == ray.VerdictUnknown
}

// undecodedUnder are the fields of fields under prefix.
func undecodedUnder(fields []string, prefix string) []string {
	var out []string
	for _, f := range fields {
		if strings.HasPrefix(f, prefix+".") {
			out = append(out, f)
		}
	}
	return out
}
