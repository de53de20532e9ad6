package pressure

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// Neighbours are the other pods of the target's node, as one LIST saw them before the run. Node
// pressure is the node's, not the pod's: the kubelet ranks every pod of the node by its usage
// stats, which lag by about 10 s, so a fill made in seconds can get a bystander evicted first, or
// several pods.
type Neighbours struct {
	Target *corev1.Pod
	// Listed: the LIST answered. Namespace is where it looked: "" for every namespace, else the
	// target's own, when pods of every namespace could not be listed (Blind says why).
	Listed    bool
	Namespace string
	Blind     string
	// Pods are NAMESPACE/NAME of the pods that had not ended, the target excepted, sorted.
	Pods []string
	// EndedBefore holds the pods that had already ended (by uid): their state is no news.
	EndedBefore map[types.UID]bool
	// ResourceVersion is the LIST's, for the watch of the node's pods to start from.
	ResourceVersion string
}

// findNeighbours LISTs the pods of pod's node: across namespaces, else, when RBAC forbids that,
// in pod's namespace only.
func findNeighbours(ctx context.Context, c Cluster, pod *corev1.Pod) Neighbours {
	n := Neighbours{Target: pod, EndedBefore: map[types.UID]bool{}}
	if pod.Spec.NodeName == "" {
		return n
	}
	for _, ns := range []string{"", pod.Namespace} {
		pods, rv, err := c.ListPodsOnNode(ctx, ns, pod.Spec.NodeName)
		if err != nil {
			if n.Blind == "" {
				n.Blind = err.Error()
			}
			if fault.KindOf(err) == fault.Forbidden {
				continue // only RBAC narrows where to look
			}
			return n
		}
		n.Listed, n.Namespace, n.ResourceVersion = true, ns, rv
		for i := range pods {
			p := &pods[i]
			switch {
			case p.Spec.NodeName != pod.Spec.NodeName:
			case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
				n.EndedBefore[p.UID] = true
			case p.Namespace == pod.Namespace && p.Name == pod.Name:
			default:
				n.Pods = append(n.Pods, p.Namespace+"/"+p.Name)
			}
		}
		sort.Strings(n.Pods)
		return n
	}
	return n
}

// Warning is what the plan says about the node's other pods, "" when there are none to name.
func (n Neighbours) Warning() string {
	p := n.Target
	node := p.Spec.NodeName
	switch {
	case node == "":
		return ""
	case !n.Listed:
		return fmt.Sprintf("cannot tell which other pods share node %s (%s): the kubelet may evict one of them first, and the report will not name it", node, n.Blind)
	case n.Namespace != "" && len(n.Pods) == 0:
		return fmt.Sprintf("no other pod of namespace %s shares node %s; pods of other namespaces could not be listed (%s), and the report will not name one the kubelet evicts", n.Namespace, node, n.Blind)
	case len(n.Pods) == 0:
		return ""
	}
	of := ""
	if n.Namespace != "" {
		of = fmt.Sprintf(" of namespace %s (pods of other namespaces could not be listed: %s)", n.Namespace, n.Blind)
	}
	return fmt.Sprintf("pod %s/%s shares node %s with %s%s, which the kubelet may evict first, or as well: %s",
		p.Namespace, p.Name, node, count(len(n.Pods), "other pod"), of, names(n.Pods, 10))
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
