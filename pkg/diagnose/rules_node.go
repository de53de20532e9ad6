package diagnose

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// nodePressure: a node running this cluster's pods is under pressure or not ready, the warning
// before an eviction (failure-modes row 14) or a lost head.
func nodePressure(ix *index, c *clusterView) []Finding {
	if !ix.s.CanSee("nodes") {
		return nil
	}
	podsOn := map[string][]string{}
	for _, group := range [][]*corev1.Pod{c.heads, c.workers} {
		for _, p := range group {
			if p.Spec.NodeName != "" {
				podsOn[p.Spec.NodeName] = append(podsOn[p.Spec.NodeName], p.Name)
			}
		}
	}
	names := make([]string, 0, len(podsOn))
	for n := range podsOn {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Finding
	for _, name := range names {
		n := ix.nodes[name]
		if n == nil {
			continue
		}
		problems := ray.NodePressures(n)
		// A node that has not reported Ready yet (ray.NodeUnreported) is not flagged: nothing
		// shows it is broken, and a new node has not reported yet.
		if r := ray.NodeReadiness(n); ray.NodeDown(r) {
			problems = append(problems, r)
		}
		if len(problems) == 0 {
			continue
		}
		pods := podsOn[name]
		ev := map[string]string{"node": name, "conditions": strings.Join(problems, ","), "pods": strings.Join(pods, ",")}
		out = append(out, c.finding(RuleNodePressure, state.Ref{Kind: "Node", Name: name, UID: string(n.UID)}, fmt.Sprintf("node %s running %s is %s: %s", name, countOf(len(pods), "Ray pod"), strings.Join(problems, ", "), strings.Join(pods, ", ")),
			"move Ray pods off "+name+" (kubectl drain "+name+" --ignore-daemonsets) or relieve it; set ephemeral-storage and memory requests on Ray pods so they are not evicted first",
			ev))
	}
	return out
}

func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
