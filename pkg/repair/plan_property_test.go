package repair

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// TestPlanProperty checks, over generated pod states and arbitrary (even wrong) findings, that the
// plan never deletes a running pod, a pod that is not a Ray head, or a pod its RayCluster does not
// control. A pod stuck Terminating on a dead node may still read phase Running (its kubelet cannot
// report); the only way such a pod appears in a plan is a --force delete with grace period 0,
// and the test checks exactly that.
func TestPlanProperty(t *testing.T) {
	const runs = 20000
	actions := 0
	for seed := uint64(1); seed <= runs; seed++ {
		r := rand.New(rand.NewPCG(seed, 42))
		s, findings, opts := generate(r)
		p := Plan(s, findings, opts)
		if err := checkPlan(s, p, opts); err != nil {
			t.Fatalf("seed %d: %v\nplan: %+v", seed, err, p)
		}
		actions += len(p.Actions)
		// doctor's and heal's loader trims what it lists (state.TrimPod and friends): the plan
		// must not depend on anything trimming drops.
		if slim := Plan(state.Trimmed(s), findings, opts); !reflect.DeepEqual(slim, p) {
			t.Fatalf("seed %d: the plan of the trimmed snapshot differs\ntrimmed: %+v\nfull:    %+v", seed, slim, p)
		}
	}
	// The generator must reach the interesting cases, or the property proves nothing.
	if actions < runs/10 {
		t.Fatalf("only %d actions over %d runs: the generator rarely produces healable heads", actions, runs)
	}
}

func checkPlan(s *state.Snapshot, p HealPlan, opts Options) error {
	seen := map[string]bool{}
	for _, a := range p.Actions {
		if seen[a.Pod.UID] {
			return fmt.Errorf("pod %s deleted twice", a.Pod.Name)
		}
		seen[a.Pod.UID] = true
		var pod *corev1.Pod
		for i := range s.Pods {
			if string(s.Pods[i].UID) == a.Pod.UID {
				pod = &s.Pods[i]
			}
		}
		if pod == nil {
			return fmt.Errorf("action on a pod not in the snapshot: %+v", a)
		}
		if a.ResourceVersion != pod.ResourceVersion || a.ResourceVersion == "" {
			return fmt.Errorf("action on %s carries resourceVersion %q, pod has %q", pod.Name, a.ResourceVersion, pod.ResourceVersion)
		}
		if pod.Labels[ray.LabelIsRayNode] != "yes" || pod.Labels[ray.LabelNodeType] != ray.NodeTypeHead {
			return fmt.Errorf("action on non-Ray or non-head pod %s (labels %v)", pod.Name, pod.Labels)
		}
		owner := metav1.GetControllerOf(pod)
		var c *rayv1.RayCluster
		for i := range s.Clusters {
			if string(s.Clusters[i].UID) == a.Cluster.UID {
				c = &s.Clusters[i]
			}
		}
		if c == nil || owner == nil || owner.Kind != "RayCluster" || owner.UID != c.UID || owner.Name != c.Name ||
			c.Namespace != pod.Namespace || pod.Labels[ray.LabelCluster] != c.Name {
			return fmt.Errorf("action on %s, which its RayCluster %v does not control (owner %+v)", pod.Name, a.Cluster, owner)
		}
		if pod.DeletionTimestamp == nil {
			if pod.Status.Phase != corev1.PodFailed && pod.Status.Phase != corev1.PodSucceeded {
				return fmt.Errorf("action on %s in phase %q", pod.Name, pod.Status.Phase)
			}
			if a.GracePeriodSeconds != nil {
				return fmt.Errorf("grace period set on a terminal pod %s", pod.Name)
			}
			continue
		}
		if !opts.Force || !a.Force() {
			return fmt.Errorf("pod %s being deleted is in the plan without --force and grace 0", pod.Name)
		}
		if !s.CanSee("nodes") {
			return fmt.Errorf("force delete of %s without seeing nodes", pod.Name)
		}
		for _, n := range s.Nodes {
			if n.Name == pod.Spec.NodeName && len(n.Spec.Taints) == 0 &&
				len(n.Status.Conditions) > 0 && n.Status.Conditions[0].Status == corev1.ConditionTrue {
				return fmt.Errorf("force delete of %s on Ready node %s", pod.Name, n.Name)
			}
		}
	}
	return nil
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func generate(r *rand.Rand) (*state.Snapshot, []diagnose.Finding, Options) {
	s := &state.Snapshot{Now: t0}
	names := []string{"a", "b"}
	for _, n := range names {
		c := cluster(pick(r, "ns1", "ns1", "ns2"), n)
		if r.IntN(8) == 0 {
			yes := true
			c.Spec.Suspend = &yes
		}
		if r.IntN(5) > 0 { // sometimes the cluster is gone
			s.Clusters = append(s.Clusters, c)
		}
	}
	for i, n := range []string{"n1", "n2", "n3"} {
		nd := node(n, pick(r, corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown))
		if r.IntN(6) == 0 {
			nd.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}}
		}
		if i == 2 && r.IntN(2) == 0 {
			continue // n3 is gone
		}
		s.Nodes = append(s.Nodes, nd)
	}
	if r.IntN(6) == 0 {
		s.Blind = []state.Gap{{Resource: "nodes", Reason: "forbidden"}}
	}
	npods := r.IntN(6)
	for i := 0; i < npods; i++ {
		cname := pick(r, names...)
		c := cluster(pick(r, "ns1", "ns2"), cname)
		for _, have := range s.Clusters {
			if have.Name == cname && r.IntN(5) > 0 {
				c = have // mostly a pod of an existing cluster
			}
		}
		p := head(c, fmt.Sprintf("%s-pod-%d", cname, i))
		p.ResourceVersion = fmt.Sprint(r.IntN(1000) + 1)
		switch r.IntN(12) {
		case 0:
			delete(p.Labels, ray.LabelIsRayNode)
		case 1:
			p.Labels[ray.LabelIsRayNode] = pick(r, "no", "true", "")
		}
		if r.IntN(10) == 0 {
			p.Labels[ray.LabelNodeType] = pick(r, ray.NodeTypeWorker, "", "Head")
		}
		if r.IntN(10) == 0 {
			p.Labels[ray.LabelCluster] = pick(r, names...)
		}
		switch r.IntN(14) {
		case 0:
			p.OwnerReferences = nil
		case 1:
			p.OwnerReferences[0].UID = types.UID("uid-" + pick(r, names...))
		case 2:
			p.OwnerReferences[0].Controller = nil
		case 3:
			p.OwnerReferences[0].Kind = pick(r, "RayJob", "ReplicaSet")
		case 4:
			p.OwnerReferences[0].APIVersion = "apps/v1"
		}
		p.Status.Phase = pick(r, corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown, "")
		p.Status.Reason = pick(r, "", "Evicted", "Shutdown", "NodeLost")
		p.Spec.RestartPolicy = pick(r, corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)
		p.Spec.NodeName = pick(r, "n1", "n2", "n3", "")
		switch r.IntN(4) {
		case 0:
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ray-head", State: corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
		case 1:
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ray-head", State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{Reason: "ContainerStatusUnknown", ExitCode: 137}}}}
		case 2:
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ray-head", Ready: true, State: corev1.ContainerState{
				Running: &corev1.ContainerStateRunning{}}}}
		}
		if r.IntN(3) == 0 {
			ts := metav1.NewTime(t0.Add(-10 * 60e9))
			p.DeletionTimestamp = &ts
		}
		s.Pods = append(s.Pods, p)
	}
	rules := []string{diagnose.RuleHeadEvicted, diagnose.RuleHeadTerminated, diagnose.RuleHeadTerminatingStuck,
		diagnose.RuleHeadDuplicate, diagnose.RuleHeadPending, diagnose.RuleHeadCrashLoop, diagnose.RuleHeadMissing,
		diagnose.RuleNodePressure}
	var findings []diagnose.Finding
	// Findings are arbitrary: any rule on any pod or cluster, as if the rules were wrong. The
	// planner's guards alone must keep the plan safe.
	for i := range s.Pods {
		for _, rule := range rules {
			if r.IntN(3) == 0 {
				c := cluster(pick(r, s.Pods[i].Namespace, "ns1"), pick(r, names...))
				f := finding(rule, c, &s.Pods[i])
				if r.IntN(3) == 0 {
					f = finding(rule, c, nil)
				}
				findings = append(findings, f)
			}
		}
	}
	return s, findings, Options{Force: r.IntN(2) == 0}
}
