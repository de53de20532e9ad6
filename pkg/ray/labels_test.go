package ray

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func pod(l map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: l}}
}

func TestPredicates(t *testing.T) {
	for _, tc := range []struct {
		name              string
		labels            map[string]string
		ray, head, worker bool
	}{
		{"head", map[string]string{LabelIsRayNode: "yes", LabelNodeType: "head", LabelCluster: "a"}, true, true, false},
		{"worker", map[string]string{LabelIsRayNode: "yes", LabelNodeType: "worker", LabelCluster: "a"}, true, false, true},
		{"no labels", nil, false, false, false},
		{"is-ray-node not yes", map[string]string{LabelIsRayNode: "true", LabelNodeType: "head"}, false, true, false},
		{"node type is case-sensitive", map[string]string{LabelIsRayNode: "yes", LabelNodeType: "Head"}, true, false, false},
	} {
		p := pod(tc.labels)
		if IsRayPod(p) != tc.ray || IsHead(p) != tc.head || IsWorker(p) != tc.worker {
			t.Errorf("%s: IsRayPod %v IsHead %v IsWorker %v, want %v %v %v", tc.name, IsRayPod(p), IsHead(p), IsWorker(p), tc.ray, tc.head, tc.worker)
		}
	}
}

func TestSelectors(t *testing.T) {
	head := labels.Set{LabelIsRayNode: "yes", LabelNodeType: "head", LabelCluster: "a"}
	worker := labels.Set{LabelIsRayNode: "yes", LabelNodeType: "worker", LabelCluster: "a"}
	otherHead := labels.Set{LabelIsRayNode: "yes", LabelNodeType: "head", LabelCluster: "b"}
	if got, want := HeadSelector("a"), "ray.io/cluster=a,ray.io/node-type=head"; got != want {
		t.Fatalf("HeadSelector = %q, want %q", got, want)
	}
	sel, err := labels.Parse(HeadSelector("a"))
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(head) || sel.Matches(worker) || sel.Matches(otherHead) {
		t.Errorf("HeadSelector(a) must match only a's head")
	}
	ray, err := labels.Parse(RayPodSelector)
	if err != nil {
		t.Fatal(err)
	}
	if !ray.Matches(head) || !ray.Matches(worker) || ray.Matches(labels.Set{LabelCluster: "a"}) {
		t.Errorf("RayPodSelector must match Ray pods only")
	}
}
