package ray

import (
	"strings"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// A budget that can never allow an eviction is known from what the disruption controller wrote: maxUnavailable
// 0, or one the disruption controller cannot compute (its SyncFailed condition); a budget that
// allows nothing now but will (minAvailable: 1 over one pod) is left to the run's retries.
func TestBudgetNeverAllows(t *testing.T) {
	zero, zeroPct, one := intstr.FromInt32(0), intstr.FromString("0%"), intstr.FromInt32(1)
	syncFailed := policyv1.PodDisruptionBudgetStatus{Conditions: []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition,
		Status: metav1.ConditionFalse, Reason: policyv1.SyncFailedReason, Message: "found no controllers for pod w"}}}
	for _, tc := range []struct {
		name string
		pdb  policyv1.PodDisruptionBudget
		want string
	}{
		{"maxUnavailable 0", policyv1.PodDisruptionBudget{Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &zero}}, "maxUnavailable is 0"},
		{"maxUnavailable 0%", policyv1.PodDisruptionBudget{Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &zeroPct}}, "maxUnavailable is 0%"},
		{"not computable", policyv1.PodDisruptionBudget{Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one}, Status: syncFailed}, "cannot compute it (SyncFailed: found no controllers"},
		{"minAvailable 1, nothing allowed now", policyv1.PodDisruptionBudget{Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one}}, ""},
		{"maxUnavailable 1, computed", policyv1.PodDisruptionBudget{Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one}, Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}}, ""},
	} {
		got := BudgetNeverAllows(&tc.pdb)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
