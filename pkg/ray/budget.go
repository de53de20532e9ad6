package ray

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BudgetNeverAllows says why pdb, as the disruption controller reports it, can never allow an
// eviction ("" when it can): maxUnavailable 0 (or 0%), or the controller's own SyncFailed
// condition. chaos drain refuses a drain over such a budget before it cordons.
func BudgetNeverAllows(pdb *policyv1.PodDisruptionBudget) string {
	if mu := pdb.Spec.MaxUnavailable; mu != nil && (mu.String() == "0" || mu.String() == "0%") {
		return "its maxUnavailable is " + mu.String() + ": it allows no eviction by its own words (and maxUnavailable cannot be computed over Ray pods)"
	}
	for _, c := range pdb.Status.Conditions {
		if c.Type == policyv1.DisruptionAllowedCondition && c.Status == metav1.ConditionFalse && c.Reason == policyv1.SyncFailedReason {
			return "the disruption controller cannot compute it (" + c.Reason + ": " + c.Message + "): " +
				"over Ray pods, whose owner (a RayCluster) has no scale subresource, only an integer minAvailable can be computed"
		}
	}
	return ""
}
