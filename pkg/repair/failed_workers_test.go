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

func worker(c rayv1.RayCluster, name string) corev1.Pod {
	w := head(c, name)
	w.Labels[ray.LabelNodeType] = ray.NodeTypeWorker
	w.Labels[ray.LabelGroup] = "small"
	return w
}

// failedWorkerPlan diagnoses s as doctor does and plans heal from its findings.
func failedWorkerPlan(s *state.Snapshot) HealPlan {
	return Plan(s, diagnose.Diagnose(s, diagnose.DefaultOptions()).Findings, Options{})
}

// On KubeRay v1.1.1 an evicted worker is never replaced: heal deletes it with its UID and
// resourceVersion, says "worker pod" in its Events, and leaves the head and the running worker.
func TestPlanFailedWorkers(t *testing.T) {
	c := cluster("ml", "rc")
	h := head(c, "rc-head-a")
	ok := worker(c, "rc-worker-ok")
	gone := evicted(worker(c, "rc-worker-gone"))
	gone.ResourceVersion = "42"
	s := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{h, ok, gone},
		Deployments: []appsv1.Deployment{operatorDeployment("quay.io/kuberay/operator:v1.1.1")}}
	p := failedWorkerPlan(s)
	if len(p.Actions) != 1 {
		t.Fatalf("actions = %+v, not healable %+v", p.Actions, p.NotHealable)
	}
	a := p.Actions[0]
	if a.Rule != diagnose.RuleWorkerFailed || a.Pod.Name != "rc-worker-gone" || a.Pod.UID != "uid-rc-worker-gone" || a.ResourceVersion != "42" ||
		a.Cluster.UID != "uid-rc" || a.Role() != "worker" {
		t.Errorf("action = %+v", a)
	}
	if !strings.HasSuffix(a.Why, "deleting it lets the operator create a new worker") || !strings.HasPrefix(a.Summary, "phase Failed (Evicted): The node was low on resource: memory") {
		t.Errorf("why %q, summary %q", a.Why, a.Summary)
	}
	if msg := HealEvents(a, t0, false)[0].Message; !strings.Contains(msg, "deleted worker pod rc-worker-gone") {
		t.Errorf("event %q", msg)
	}
}

// Within the grace of KubeRay v1.5.0, which deletes terminal workers itself, doctor names none
// and heal deletes none; past it, heal does.
func TestPlanFailedWorkersLeavesTheOperatorItsGrace(t *testing.T) {
	c := cluster("ml", "rc")
	w := evicted(worker(c, "rc-worker-gone"))
	stopped := func(at time.Time) {
		w.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ray-worker", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, FinishedAt: metav1.NewTime(at)}}}}
	}
	snap := func() *state.Snapshot {
		return &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{head(c, "rc-head-a"), w},
			Deployments: []appsv1.Deployment{operatorDeployment("quay.io/kuberay/operator:v1.5.0")}}
	}
	stopped(t0.Add(-30 * time.Second))
	if p := failedWorkerPlan(snap()); len(p.Actions) != 0 || len(p.NotHealable) != 0 {
		t.Fatalf("within the grace: %+v", p)
	}
	stopped(t0.Add(-10 * time.Minute))
	if p := failedWorkerPlan(snap()); len(p.Actions) != 1 || p.Actions[0].Pod.Name != "rc-worker-gone" {
		t.Fatalf("past the grace: %+v", p)
	}
}

// heal checks each worker itself: one that runs again, one being deleted and one of another
// controller are skipped, each saying why.
func TestPlanFailedWorkersChecksEachPod(t *testing.T) {
	c := cluster("ml", "rc")
	running := worker(c, "rc-worker-running")
	leaving := evicted(worker(c, "rc-worker-leaving"))
	now := metav1.NewTime(t0)
	leaving.DeletionTimestamp = &now
	foreign := evicted(worker(c, "rc-worker-foreign"))
	foreign.OwnerReferences = nil
	s := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{running, leaving, foreign}}
	f := finding(diagnose.RuleWorkerFailed, c, nil)
	f.Facts.Pods = []state.Ref{state.PodRef(&running), state.PodRef(&leaving), state.PodRef(&foreign),
		{Kind: "Pod", Namespace: "ml", Name: "rc-worker-missing"}}
	p := Plan(s, []diagnose.Finding{f}, Options{})
	if len(p.Actions) != 0 {
		t.Fatalf("actions = %+v", p.Actions)
	}
	why := map[string]string{}
	for _, sk := range p.NotHealable {
		why[sk.Object.Name] = sk.Why
	}
	for name, want := range map[string]string{
		"rc-worker-running": "the worker is Running, not terminal",
		"rc-worker-leaving": "the worker is already being deleted",
		"rc-worker-foreign": "not controlled by RayCluster ml/rc",
		"rc-worker-missing": "the pod is not in the snapshot",
	} {
		if !strings.HasPrefix(why[name], want) {
			t.Errorf("%s: why %q, want %q…", name, why[name], want)
		}
	}
}
