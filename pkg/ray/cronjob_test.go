package ray

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCronRunOf(t *testing.T) {
	yes := true
	tick := map[string]string{AnnotationCronJobTick: "2026-12-07T10:00:00Z"}
	for _, c := range []struct {
		name string
		meta metav1.ObjectMeta
		want CronRun
		ok   bool
	}{
		{"owned", metav1.ObjectMeta{Annotations: tick, OwnerReferences: []metav1.OwnerReference{{Kind: "RayCronJob", Name: "nightly", Controller: &yes}}},
			CronRun{"nightly", "2026-12-07T10:00:00Z"}, true},
		{"labelled only (its owner reference removed)", metav1.ObjectMeta{Labels: map[string]string{LabelCronJobName: "nightly"}}, CronRun{CronJob: "nightly"}, true},
		{"an owner that is not its controller", metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{Kind: "RayCronJob", Name: "nightly"}}}, CronRun{}, false},
		{"made by a user", metav1.ObjectMeta{Name: "nightly-29012345"}, CronRun{}, false},
	} {
		got, ok := CronRunOf(&rayv1.RayJob{ObjectMeta: c.meta})
		if got != c.want || ok != c.ok {
			t.Errorf("%s: CronRunOf = %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
