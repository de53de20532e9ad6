package workerkill

import (
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func workers(names ...string) []corev1.Pod {
	var out []corev1.Pod
	for _, n := range names {
		out = append(out, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	return out
}

func podNames(ps []corev1.Pod) string { return names(ps) }

// The same seed over the same workers picks the same ones, whatever the LIST's order; another
// seed picks others (for these five, 1 and 2 differ).
func TestChooseIsRepeatableBySeed(t *testing.T) {
	a := choose(workers("w-a", "w-b", "w-c", "w-d", "w-e"), 2, 1)
	b := choose(workers("w-e", "w-c", "w-a", "w-d", "w-b"), 2, 1)
	if podNames(a) != podNames(b) {
		t.Errorf("seed 1 picked %s, then %s from the same workers in another order", podNames(a), podNames(b))
	}
	if c := choose(workers("w-a", "w-b", "w-c", "w-d", "w-e"), 2, 2); podNames(c) == podNames(a) {
		t.Errorf("seeds 1 and 2 picked the same workers %s: the seed does not choose", podNames(c))
	}
	if all := choose(workers("w-b", "w-a"), 2, 9); podNames(all) != "w-a, w-b" {
		t.Errorf("all of them, by name: %s", podNames(all))
	}
}

// The group is the only one, or the one named; several without --group, or an unknown one, is
// one line naming the groups.
func TestPickGroup(t *testing.T) {
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "demo"}}
	rc.Spec.WorkerGroupSpecs = []rayv1.WorkerGroupSpec{{GroupName: "small"}}
	if g, err := pickGroup(rc, ""); err != nil || g != "small" {
		t.Errorf("only group: %q, %v", g, err)
	}
	rc.Spec.WorkerGroupSpecs = append(rc.Spec.WorkerGroupSpecs, rayv1.WorkerGroupSpec{GroupName: "gpu"})
	if _, err := pickGroup(rc, ""); err == nil || !strings.Contains(err.Error(), "has 2 worker groups (small, gpu): pick one with") {
		t.Errorf("two groups, none named: %v", err)
	}
	if _, err := pickGroup(rc, "big"); err == nil || !strings.Contains(err.Error(), `no worker group "big" (its groups: small, gpu)`) {
		t.Errorf("unknown group: %v", err)
	}
	if g, err := pickGroup(rc, "gpu"); err != nil || g != "gpu" {
		t.Errorf("named group: %q, %v", g, err)
	}
}
