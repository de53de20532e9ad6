package drain

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Cluster is every API operation a drain makes (pkg/kube's Clients in the command, a fake in
// tests). Errors come back explained, one line each.
type Cluster interface {
	experiment.Reads
	GetNode(ctx context.Context, name string) (*corev1.Node, error)
	ListPodDisruptionBudgets(ctx context.Context, namespace string) ([]policyv1.PodDisruptionBudget, error)
	PodsToDrain(ctx context.Context, node string, f kube.DrainFilter) (*kube.DrainPods, error)
	CordonNode(ctx context.Context, name string, cordon, dryRun bool) (*corev1.Node, bool, error)
	DrainPod(ctx context.Context, pod *corev1.Pod, evict bool, grace int64, dryRun bool) error
	experiment.Cluster
}

// target is what the run resolved before anything is changed.
type target struct {
	node            string
	alreadyCordoned bool
	pods            []corev1.Pod // what the drain evicts
	rayPods         int
	skipped         string   // the drain library's warning about the pods it leaves
	budgets         []budget // those that cover a pod to evict
	cluster         string   // --node-of's RayCluster (a RayService's active one)
	service         string   // probed Service, "" for a URL
	portName        string
}

// budget is a PodDisruptionBudget that covers pods the drain evicts.
type budget struct {
	Namespace, Name string
	Allowed         int32
	Pods            []string
	// Never says why the budget can never allow an eviction ("" when it can).
	Never string
}

// resolve finds the node, the pods a drain takes from it and the budgets over them, and the
// probe's Service, with one read of each; nothing is changed.
func resolve(ctx context.Context, c Cluster, s *Settings) (*target, error) {
	t := &target{node: s.Node}
	if s.NodeOf.Name != "" {
		if err := s.pickNode(ctx, c, t); err != nil {
			return nil, err
		}
	}
	node, err := c.GetNode(ctx, t.node)
	if err != nil {
		return nil, err
	}
	t.alreadyCordoned = node.Spec.Unschedulable
	dp, err := c.PodsToDrain(ctx, t.node, s.DrainFilter)
	if err != nil {
		return nil, err
	}
	if len(dp.Refusals) > 0 {
		// kubectl drain stops here too: nothing is cordoned.
		return nil, invalid("cannot drain node %s: %s", t.node, strings.Join(dp.Refusals, "; "))
	}
	t.pods, t.skipped = dp.Evict, dp.Warnings
	sort.Slice(t.pods, func(i, j int) bool {
		return t.pods[i].Namespace+"/"+t.pods[i].Name < t.pods[j].Namespace+"/"+t.pods[j].Name
	})
	for i := range t.pods {
		if ray.IsRayPod(&t.pods[i]) {
			t.rayPods++
		}
	}
	switch {
	case len(t.pods) == 0:
		return nil, fault.Errorf(fault.NotFound, "node %s has no pod to evict%s: nothing was cordoned", t.node, skippedNote(t.skipped))
	case t.rayPods == 0 && !s.AnyPods:
		return nil, fault.Errorf(fault.NotFound, "node %s runs no Ray pod (%s): nothing was cordoned; pass %s to drain it anyway", t.node, availability.Plural(len(t.pods), "other pod", "other pods"), SetAnyPods)
	}
	if t.budgets, err = budgetsOver(ctx, c, t.pods); err != nil {
		return nil, err
	}
	for _, b := range t.budgets {
		if b.Never != "" {
			// Every eviction would be refused until --timeout: the drain cannot happen, so it is
			// refused here, as kubectl drain's own refusals are, before anything is cordoned.
			return nil, invalid("cannot drain node %s: PodDisruptionBudget %s/%s over %s can never allow an eviction: %s; use an integer minAvailable instead, or remove the budget for the drain; nothing was cordoned",
				t.node, b.Namespace, b.Name, strings.Join(b.Pods, ", "), b.Never)
		}
	}
	if t.service, t.portName, err = s.ProbedService(ctx, c, s.Namespace); err != nil {
		return nil, err
	}
	return t, nil
}

func skippedNote(warnings string) string {
	if warnings == "" {
		return ""
	}
	return " (" + warnings + ")"
}

// pickNode is --node-of: the node of the cluster's pod of Role (for a RayService, its active
// cluster's, whose serve Service is then the default probe). The head goes first for any.
func (s *Settings) pickNode(ctx context.Context, c Cluster, t *target) error {
	t.cluster = s.NodeOf.Name
	if s.NodeOf.Kind == ray.KindRayService {
		var err error
		if t.cluster, err = s.ServeOf(ctx, c, s.Namespace, s.NodeOf.Name); err != nil {
			return err
		}
	} else if _, err := c.GetRayCluster(ctx, s.Namespace, s.NodeOf.Name); err != nil {
		return err
	}
	pods, err := c.ListPodsMatching(ctx, s.Namespace, ray.LabelCluster+"="+t.cluster)
	if err != nil {
		return err
	}
	t.node = pickFrom(pods, s.Role)
	if t.node == "" {
		return fault.Errorf(fault.NotFound, "RayCluster %s/%s has no running %s pod on a node: nothing to drain; list its pods with: kubectl get pods -n %s -l %s=%s -o wide",
			s.Namespace, t.cluster, roleWords(s.Role), s.Namespace, ray.LabelCluster, t.cluster)
	}
	return nil
}

// pickFrom is the node of the first live pod of role, by name (the head first for any), "" when
// none is scheduled.
func pickFrom(pods []corev1.Pod, role string) string {
	sort.Slice(pods, func(i, j int) bool {
		hi, hj := ray.IsHead(&pods[i]), ray.IsHead(&pods[j])
		if hi != hj {
			return hi
		}
		return pods[i].Name < pods[j].Name
	})
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" || !ray.Live(p) {
			continue
		}
		if role == RoleAny || (role == RoleHead) == ray.IsHead(p) {
			return p.Spec.NodeName
		}
	}
	return ""
}

func roleWords(role string) string {
	if role == RoleAny {
		return "Ray"
	}
	return role
}

// budgetsOver lists the PodDisruptionBudgets of the pods' namespaces (one LIST each) and keeps
// those whose selector takes one of them.
func budgetsOver(ctx context.Context, c Cluster, pods []corev1.Pod) ([]budget, error) {
	byNS := map[string][]corev1.Pod{}
	var namespaces []string
	for _, p := range pods {
		if byNS[p.Namespace] == nil {
			namespaces = append(namespaces, p.Namespace)
		}
		byNS[p.Namespace] = append(byNS[p.Namespace], p)
	}
	var out []budget
	for _, ns := range namespaces {
		pdbs, err := c.ListPodDisruptionBudgets(ctx, ns)
		if err != nil {
			return nil, err
		}
		out = append(out, matchBudgets(pdbs, byNS[ns])...)
	}
	return out, nil
}

// matchBudgets keeps the budgets whose selector takes one of pods, as the Eviction API matches
// them (an empty selector takes every pod of the namespace in policy/v1).
func matchBudgets(pdbs []policyv1.PodDisruptionBudget, pods []corev1.Pod) []budget {
	var out []budget
	for _, pdb := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			continue
		}
		b := budget{Namespace: pdb.Namespace, Name: pdb.Name, Allowed: pdb.Status.DisruptionsAllowed, Never: ray.BudgetNeverAllows(&pdb)}
		for _, p := range pods {
			if sel.Matches(labels.Set(p.Labels)) {
				b.Pods = append(b.Pods, p.Name)
			}
		}
		if len(b.Pods) > 0 {
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name })
	return out
}

// words says what a budget will do to the drain.
func (b budget) words() string {
	if b.Allowed == 0 {
		return fmt.Sprintf("PodDisruptionBudget %s/%s allows no disruption now: it will refuse %s until more of its pods are healthy", b.Namespace, b.Name, strings.Join(b.Pods, ", "))
	}
	return fmt.Sprintf("PodDisruptionBudget %s/%s allows %d disruption(s) now, over %s", b.Namespace, b.Name, b.Allowed, strings.Join(b.Pods, ", "))
}
