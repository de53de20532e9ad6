package diagnose

import (
	"fmt"
	"sort"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/util/version"
)

// RuleRayJobRetryDeletesCluster is an invariant between a RayJob's spec and what its operator does
// with it: a RayJob that borrows a RayCluster (spec.clusterSelector) must not be retried by
// deleting that cluster. KubeRay v1.5.0 retries a failed RayJob (spec.backoffLimit) through
// Retrying, which deletes the RayCluster its status names whatever its origin
// (deleteClusterResources): the borrowed cluster, and every job running on it, goes with the first
// failure (kuberay #4516). v1.6.0 refuses the combination (ValidationFailed), which rayjob-failed
// reports; releases before v1.5.0 were not read, and the rule stays silent with them.
const RuleRayJobRetryDeletesCluster = "rayjob-retry-deletes-cluster"

// retryDeletesBorrowed are the releases read to retry a RayJob by deleting a borrowed cluster
// (kuberay #4516).
var retryDeletesBorrowed = releaseSpan{version.MustParseSemantic("v1.5.0"), version.MustParseSemantic("v1.6.0")}

// rayJobRetryDeletesCluster reports a RayJob not yet finished with a clusterSelector and a
// backoffLimit above 0, under a known operator of the releases that delete the borrowed cluster
// on retry. Silent on a RayJob being deleted or already Complete, Failed or ValidationFailed.
func rayJobRetryDeletesCluster(ix *index, j *jobView) []Finding {
	spec, st := j.job.Spec, j.job.Status
	if len(spec.ClusterSelector) == 0 || spec.BackoffLimit == nil || *spec.BackoffLimit == 0 || j.job.DeletionTimestamp != nil {
		return nil
	}
	switch st.JobDeploymentStatus {
	case rayv1.JobDeploymentStatusComplete, rayv1.JobDeploymentStatusFailed, rayv1.JobDeploymentStatusValidationFailed:
		return nil
	}
	op, ok := ix.operatorIn(retryDeletesBorrowed)
	if !ok {
		return nil
	}
	var sel []string
	for k, v := range spec.ClusterSelector {
		sel = append(sel, k+"="+v)
	}
	sort.Strings(sel)
	borrowed := "the RayCluster its clusterSelector (" + strings.Join(sel, ",") + ") picks"
	if st.RayClusterName != "" {
		borrowed = "RayCluster " + st.RayClusterName + ", which its clusterSelector picked"
	}
	ev := jobEvidence(j.job)
	ev["backoffLimit"], ev["clusterSelector"], ev["operator"] = fmt.Sprint(*spec.BackoffLimit), strings.Join(sel, ","), op
	msg := fmt.Sprintf("%s borrows %s and may be retried %d time(s): KubeRay %s retries a failed RayJob by deleting the RayCluster its status names, "+
		"a borrowed one included, with every job on it (kuberay #4516, fixed in v1.6.0, which refuses the combination)", j.what(), borrowed, *spec.BackoffLimit, op)
	remedy := "set spec.backoffLimit to 0 on a RayJob with a clusterSelector (kubectl patch rayjob " + j.job.Name + " -n " + j.job.Namespace +
		" --type merge -p '{\"spec\":{\"backoffLimit\":0}}'), or upgrade the KubeRay operator to v1.6.0"
	return []Finding{j.finding(RuleRayJobRetryDeletesCluster, msg, remedy, ev)}
}
