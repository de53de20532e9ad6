package ray

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func node(taints []corev1.Taint, conds ...corev1.NodeCondition) *corev1.Node {
	return &corev1.Node{Spec: corev1.NodeSpec{Taints: taints}, Status: corev1.NodeStatus{Conditions: conds}}
}

func cond(t corev1.NodeConditionType, s corev1.ConditionStatus) corev1.NodeCondition {
	return corev1.NodeCondition{Type: t, Status: s}
}

func TestNodeReadiness(t *testing.T) {
	unreachable := []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}}
	for _, tc := range []struct {
		name string
		n    *corev1.Node
		want string
		down bool
	}{
		{"ready", node(nil, cond(corev1.NodeReady, corev1.ConditionTrue)), NodeReady, false},
		{"not ready", node(nil, cond(corev1.NodeReady, corev1.ConditionFalse)), NodeNotReady, true},
		{"ready unknown", node(nil, cond(corev1.NodeReady, corev1.ConditionUnknown)), NodeUnreachable, true},
		{"unreachable taint wins over Ready=True", node(unreachable, cond(corev1.NodeReady, corev1.ConditionTrue)), NodeUnreachable, true},
		{"no Ready condition", node(nil, cond(corev1.NodeDiskPressure, corev1.ConditionFalse)), NodeUnreported, false},
		{"no conditions at all", node(nil), NodeUnreported, false},
		{"undefined status", node(nil, cond(corev1.NodeReady, "Maybe")), NodeUnreported, false},
	} {
		got := NodeReadiness(tc.n)
		if got != tc.want || NodeDown(got) != tc.down {
			t.Errorf("%s: NodeReadiness = %q (down %v), want %q (down %v)", tc.name, got, NodeDown(got), tc.want, tc.down)
		}
	}
}

func TestNodePressures(t *testing.T) {
	n := node(nil,
		cond(corev1.NodePIDPressure, corev1.ConditionTrue),
		cond(corev1.NodeMemoryPressure, corev1.ConditionFalse),
		cond(corev1.NodeDiskPressure, corev1.ConditionTrue),
		cond(corev1.NodeReady, corev1.ConditionTrue))
	if got, want := NodePressures(n), []string{"DiskPressure", "PIDPressure"}; !slices.Equal(got, want) {
		t.Errorf("NodePressures = %v, want %v (fixed order, True only)", got, want)
	}
	if got := NodePressures(node(nil)); got != nil {
		t.Errorf("NodePressures(no conditions) = %v, want nil", got)
	}
}
