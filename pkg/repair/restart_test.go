package repair

import (
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// evictedAt is an evicted head whose container stopped at t.
func evictedAt(c rayv1.RayCluster, name string, t time.Time) corev1.Pod {
	p := evicted(head(c, name))
	p.Spec.Containers = []corev1.Container{{Name: "ray-head"}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ray-head", State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "ContainerStatusUnknown", FinishedAt: metav1.NewTime(t)}}}}
	return p
}

// On KubeRay >= v1.2.0 the operator deletes a terminal head itself (shouldDeletePod): within its
// grace heal leaves the head alone and says so; after it, heal deletes it. On v1.1.1 with
// restartPolicy Always nothing will, and heal acts at once.
func TestPlanLeavesTheOperatorItsGrace(t *testing.T) {
	for _, tc := range []struct {
		image  string
		ago    time.Duration
		act    bool
		reason string
	}{
		{"quay.io/kuberay/operator:v1.5.0", 20 * time.Second, false, "KubeRay v1.5.0 deletes this head and creates a new one itself; heal leaves it to the operator until 2024-05-08T07:57:10Z"},
		{"quay.io/kuberay/operator:v1.6.0", 20 * time.Second, false, "KubeRay v1.6.0 deletes this head"},
		{"quay.io/kuberay/operator:v1.5.0", 3 * time.Minute, true, ""},
		{"quay.io/kuberay/operator:v1.1.1", 20 * time.Second, true, ""},
	} {
		c := cluster("default", "rc")
		c.CreationTimestamp = metav1.NewTime(t0.Add(-time.Hour))
		p := evictedAt(c, "rc-head-a", t0.Add(-tc.ago))
		s := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{p},
			Deployments: []appsv1.Deployment{operatorDeployment(tc.image)}}
		got := diagnoseAndPlan(s, Options{})
		if tc.act {
			if len(got.Actions) != 1 || got.Actions[0].Pod.Name != "rc-head-a" {
				t.Errorf("%s, evicted %s ago: want the head deleted, got %+v", tc.image, tc.ago, got)
			}
			continue
		}
		if !got.Empty() || len(got.NotHealable) != 1 || !strings.Contains(got.NotHealable[0].Why, tc.reason) {
			t.Errorf("%s, evicted %s ago: want no action and %q, got %+v", tc.image, tc.ago, tc.reason, got)
		}
	}
}

// A cluster whose head restart is disabled by design is never acted on, whatever the finding.
func TestPlanNeverActsOnRestartDisabledClusters(t *testing.T) {
	c := cluster("default", "rc")
	c.Annotations = map[string]string{ray.AnnotationDisableProvisionedHeadRestart: "true"}
	c.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayClusterProvisioned), Status: metav1.ConditionTrue}}
	p := evictedAt(c, "rc-head-a", t0.Add(-time.Hour))
	stuck := terminating(head(c, "rc-head-b"), "node-gone")
	for _, image := range []string{"quay.io/kuberay/operator:v1.6.0", "quay.io/kuberay/operator:v1.1.1", "kuberay/operator:latest"} {
		s := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{p, stuck},
			Deployments: []appsv1.Deployment{operatorDeployment(image)}}
		// Findings as an older doctor (or a script) might hand them over: heal still refuses.
		got := Plan(s, []diagnose.Finding{
			finding(diagnose.RuleHeadEvicted, c, &p),
			finding(diagnose.RuleHeadTerminatingStuck, c, &stuck),
			finding(diagnose.RuleHeadDuplicate, c, &stuck),
		}, Options{Force: true})
		if !got.Empty() || len(got.NotHealable) == 0 {
			t.Fatalf("%s: plan %+v", image, got)
		}
		for _, sk := range got.NotHealable {
			if !strings.Contains(sk.Why, "head restart is disabled on this RayCluster by design") {
				t.Errorf("%s: %s skipped for %q", image, sk.Rule, sk.Why)
			}
		}
	}
	// The real doctor: head-restart-disabled is the one finding, and heal says why it will not act.
	s := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{p},
		Deployments: []appsv1.Deployment{operatorDeployment("quay.io/kuberay/operator:v1.6.0")}}
	got := diagnoseAndPlan(s, Options{})
	if !got.Empty() || len(got.NotHealable) != 1 || got.NotHealable[0].Rule != diagnose.RuleHeadRestartDisabled ||
		!strings.Contains(got.NotHealable[0].Why, "KubeRay v1.6.0 creates no new head, so heal never acts on it") {
		t.Fatalf("plan %+v", got)
	}
}

// heal --watch reads no Deployments: a provisioned RayJob cluster may be a v1.5.x one, whose head
// nothing recreates, so heal leaves it alone; with a known v1.6.0 operator it is healable.
func TestPlanRayJobClusterWithoutOperatorVersion(t *testing.T) {
	c := cluster("default", "rc")
	c.Labels = map[string]string{ray.LabelOriginatedFromCRD: "RayJob"}
	c.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayClusterProvisioned), Status: metav1.ConditionTrue}}
	p := evictedAt(c, "rc-head-a", t0.Add(-time.Hour))
	fs := []diagnose.Finding{finding(diagnose.RuleHeadEvicted, c, &p)}
	s := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{p},
		Blind: []state.Gap{{Resource: "deployments", Reason: "not watched by heal --watch"}}}
	if got := Plan(s, fs, Options{}); !got.Empty() {
		t.Fatalf("unknown operator: %+v", got)
	}
	s.Blind = nil
	s.Deployments = []appsv1.Deployment{operatorDeployment("quay.io/kuberay/operator:v1.6.0")}
	if got := Plan(s, fs, Options{}); len(got.Actions) != 1 {
		t.Fatalf("KubeRay v1.6.0 recreates a K8sJobMode RayJob's head: %+v", got)
	}
	s.Deployments = []appsv1.Deployment{operatorDeployment("quay.io/kuberay/operator:v1.5.0")}
	if got := Plan(s, fs, Options{}); !got.Empty() {
		t.Fatalf("KubeRay v1.5.0 recreates no RayJob head: %+v", got)
	}
}
