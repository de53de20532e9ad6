package repair

import (
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// The real doctor rules feed the planner: snapshot → Diagnose → Plan.

func operatorDeployment(image string) appsv1.Deployment {
	return appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ray-system", Name: "kuberay-operator",
			Labels: map[string]string{"app.kubernetes.io/name": "kuberay-operator"}},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "kuberay-operator", Image: image}}}}},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 1},
	}
}

func diagnoseAndPlan(s *state.Snapshot, opts Options) HealPlan {
	return Plan(s, diagnose.Diagnose(s, diagnose.DefaultOptions()).Findings, opts)
}

func TestDiagnosePlanSeed000(t *testing.T) {
	_, p, s := seed000()
	s.Deployments = []appsv1.Deployment{operatorDeployment("quay.io/kuberay/operator:v1.1.1")}
	got := diagnoseAndPlan(s, Options{})
	if len(got.Actions) != 1 || got.Actions[0].Rule != diagnose.RuleHeadEvicted || got.Actions[0].Pod.Name != p.Name ||
		got.Actions[0].Pod.UID != string(p.UID) || got.Actions[0].ResourceVersion != "100" || got.Actions[0].Force() {
		t.Fatalf("plan: %+v", got)
	}
}

func TestDiagnosePlanHealthyClusterHasNothingToDo(t *testing.T) {
	c := cluster("default", "rc")
	c.CreationTimestamp = metav1.NewTime(t0.Add(-time.Hour))
	h := head(c, "rc-head-a")
	s := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{h},
		Nodes:       []corev1.Node{node("node-a", corev1.ConditionTrue)},
		Deployments: []appsv1.Deployment{operatorDeployment("quay.io/kuberay/operator:v1.1.1")}}
	if got := diagnoseAndPlan(s, Options{Force: true}); !got.Empty() || len(got.NotHealable) != 0 {
		t.Fatalf("plan: %+v", got)
	}
}

func TestDiagnosePlanStuckOnDeadNode(t *testing.T) {
	c := cluster("default", "rc")
	h := terminating(head(c, "rc-head-a"), "node-a")
	s := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{h},
		Nodes: []corev1.Node{node("node-a", corev1.ConditionUnknown)}}
	got := diagnoseAndPlan(s, Options{})
	if got.Stuck != 1 || !got.Empty() || len(got.NotHealable) != 1 || got.NotHealable[0].Rule != diagnose.RuleHeadTerminatingStuck {
		t.Fatalf("without --force: %+v", got)
	}
	got = diagnoseAndPlan(s, Options{Force: true})
	if len(got.Actions) != 1 || !got.Actions[0].Force() {
		t.Fatalf("with --force: %+v", got)
	}
}

func TestDiagnosePlanPendingIsNotHealable(t *testing.T) {
	c := cluster("default", "rc")
	h := head(c, "rc-head-a")
	h.CreationTimestamp = metav1.NewTime(t0.Add(-time.Hour))
	h.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available"}}}
	s := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{h}}
	got := diagnoseAndPlan(s, Options{})
	if !got.Empty() || len(got.NotHealable) != 1 || got.NotHealable[0].Rule != diagnose.RuleHeadPending {
		t.Fatalf("plan: %+v", got)
	}
}
