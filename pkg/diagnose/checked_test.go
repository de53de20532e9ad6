package diagnose

import (
	"slices"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Checked picks a target's clusters from the Ray objects alone: the cluster it names, or the ones
// its RayService's status or its RayJob's controller reference says it made.
func TestChecked(t *testing.T) {
	yes := true
	s := &state.Snapshot{
		Clusters: []rayv1.RayCluster{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "svc-raycluster-abc"}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "job-raycluster-xyz",
				OwnerReferences: []metav1.OwnerReference{{Kind: "RayJob", Name: "job", Controller: &yes}}}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "plain"}},
		},
		Services: []rayv1.RayService{{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "svc"},
			Status: rayv1.RayServiceStatuses{ActiveServiceStatus: rayv1.RayServiceStatus{RayClusterName: "svc-raycluster-abc"}}}},
	}
	for _, tc := range []struct {
		target *Target
		want   []string
	}{
		{nil, []string{"svc-raycluster-abc", "job-raycluster-xyz", "plain"}},
		{&Target{Kind: "RayService", Name: "svc"}, []string{"svc-raycluster-abc"}},
		{&Target{Name: "job"}, []string{"job-raycluster-xyz"}},
		{&Target{Kind: "RayCluster", Name: "plain"}, []string{"plain"}},
		{&Target{Kind: "RayJob", Name: "svc"}, nil},
	} {
		checked := Checked(s, tc.target)
		var got []string
		for i := range s.Clusters {
			if checked(&s.Clusters[i]) {
				got = append(got, s.Clusters[i].Name)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Checked(%+v) = %v, want %v", tc.target, got, tc.want)
		}
	}
}
