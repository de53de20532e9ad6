package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/golden"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func rayPod(name, cluster, nodeType, node string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", UID: types.UID("uid-p-" + name),
		Labels: map[string]string{ray.LabelIsRayNode: "yes", ray.LabelCluster: cluster, ray.LabelNodeType: nodeType}},
		Spec: corev1.PodSpec{NodeName: node}}
}

func running(name string, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

// scene: cluster a (a RayService's) with a head that restarted, an init container, a sidecar and a
// worker not started yet; cluster b of a RayJob on an existing cluster (clusterSelector); the
// operator.
func scene() *state.Snapshot {
	head := rayPod("a-head", "a", "head", "n1")
	head.Spec.InitContainers = []corev1.Container{{Name: "wait-gcs"}, {Name: "autoscaler"}}
	head.Spec.Containers = []corev1.Container{{Name: "ray-head"}}
	head.Status.InitContainerStatuses = []corev1.ContainerStatus{
		{Name: "wait-gcs", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
		running("autoscaler", 0)}
	head.Status.ContainerStatuses = []corev1.ContainerStatus{running("ray-head", 2)}
	worker := rayPod("a-worker", "a", "worker", "n2")
	worker.Spec.Containers = []corev1.Container{{Name: "ray-worker"}}
	worker.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ray-worker", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
	bHead := rayPod("b-head", "b", "head", "n3")
	bHead.Spec.Containers = []corev1.Container{{Name: "ray-head"}}
	bHead.Status.ContainerStatuses = []corev1.ContainerStatus{running("ray-head", 0)}
	return &state.Snapshot{Now: now,
		Clusters: []rayv1.RayCluster{
			{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ml", UID: "uid-a", OwnerReferences: []metav1.OwnerReference{{Kind: "RayService", Name: "svc", UID: "uid-svc"}}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ml", UID: "uid-b"}},
		},
		Services: []rayv1.RayService{{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "ml", UID: "uid-svc"},
			Status: rayv1.RayServiceStatuses{ActiveServiceStatus: rayv1.RayServiceStatus{RayClusterName: "a"}}}},
		Jobs: []rayv1.RayJob{{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "ml", UID: "uid-job"},
			Status: rayv1.RayJobStatus{RayClusterName: "b"}}},
		Pods:  []corev1.Pod{head, worker, bHead},
		Nodes: []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, {ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, {ObjectMeta: metav1.ObjectMeta{Name: "n3"}}, {ObjectMeta: metav1.ObjectMeta{Name: "idle"}}},
		Deployments: []appsv1.Deployment{{ObjectMeta: metav1.ObjectMeta{Name: "kuberay-operator", Namespace: "ray-system"},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "quay.io/kuberay/operator:v1.1.1"}}}}}}},
	}
}

func names[T any](xs []*T, name func(*T) string) string {
	var out []string
	for _, x := range xs {
		out = append(out, name(x))
	}
	return strings.Join(out, ",")
}

func TestMakePlan(t *testing.T) {
	s := scene()
	for _, c := range []struct {
		target                                    *diagnose.Target
		clusters, services, jobs, pods, nodes, ns string
	}{
		{nil, "a,b", "svc", "job", "a-head,a-worker,b-head", "n1,n2,n3", "ml"},
		{&diagnose.Target{Kind: ray.KindRayService, Name: "svc"}, "a", "svc", "", "a-head,a-worker", "n1,n2", "ml"},
		{&diagnose.Target{Name: "b"}, "b", "", "job", "b-head", "n3", "ml"},
		{&diagnose.Target{Kind: ray.KindRayJob, Name: "job"}, "b", "", "job", "b-head", "n3", "ml"},
	} {
		p := MakePlan(s, c.target, PlanOptions{Logs: true})
		got := []string{
			names(p.Clusters, func(o *rayv1.RayCluster) string { return o.Name }),
			names(p.Services, func(o *rayv1.RayService) string { return o.Name }),
			names(p.Jobs, func(o *rayv1.RayJob) string { return o.Name }),
			names(p.Pods, func(o *corev1.Pod) string { return o.Name }),
			names(p.Nodes, func(o *corev1.Node) string { return o.Name }),
			strings.Join(p.Namespaces, ","),
		}
		want := []string{c.clusters, c.services, c.jobs, c.pods, c.nodes, c.ns}
		if strings.Join(got, " | ") != strings.Join(want, " | ") {
			t.Errorf("%v: plan %q, want %q", c.target, got, want)
		}
		if len(p.Operators) != 1 || !p.OperatorLogs {
			t.Errorf("%v: operators %v", c.target, p.Operators)
		}
	}
}

// Each container that started is read once, and once more for its previous instance when it
// restarted; init containers and sidecars too; a container that never started is not asked for.
func TestPlanLogs(t *testing.T) {
	p := MakePlan(scene(), &diagnose.Target{Name: "a"}, PlanOptions{Logs: true})
	var got []string
	for _, l := range p.Logs {
		got = append(got, l.Path())
	}
	want := "logs/ml/a-head/wait-gcs.log logs/ml/a-head/autoscaler.log logs/ml/a-head/ray-head.log logs/ml/a-head/ray-head.previous.log"
	if strings.Join(got, " ") != want {
		t.Errorf("logs:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	if p := MakePlan(scene(), nil, PlanOptions{}); len(p.Logs) != 0 || p.OperatorLogs {
		t.Errorf("without Logs the plan reads logs: %v", p.Logs)
	}
}

// What each kind of object looks like redacted, as a golden file: every secret-looking value
// and Secret reference reads [redacted], the rest is kept.
func TestObjectYAML(t *testing.T) {
	rc := &rayv1.RayCluster{}
	data, err := os.ReadFile(filepath.Join("testdata", "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, rc); err != nil {
		t.Fatal(err)
	}
	found := redact.Set{}
	got, _ := artifact.ObjectYAML("ray.io/v1", "RayCluster", rc, found)
	golden.Assert(t, filepath.Join("testdata", "cluster.golden"), got)
	for _, s := range []string{"envPw1", "refName2", "refKey3", "startPw4", "ftPw5", "volSecret6", "pullSecret7", "fromSecret8"} {
		if strings.Contains(string(got), s) {
			t.Errorf("%s is in the rendered object", s)
		}
		// A Secret's key (a word such as "password") is redacted where it is referenced only.
		if _, ok := found[s]; !ok && s != "refKey3" {
			t.Errorf("%s was not handed to the text pass", s)
		}
	}
	for _, keep := range []string{"PLAIN", "visible-value", "dashboard-host", "0.0.0.0", "serviceAccountName: ray"} {
		if !strings.Contains(string(got), keep) {
			t.Errorf("%q was redacted or dropped", keep)
		}
	}
}

func TestIndex(t *testing.T) {
	s := scene()
	p := MakePlan(s, nil, PlanOptions{Logs: true})
	c := Render(s, p, Collected{Logs: map[artifact.LogRequest][]byte{p.Logs[0]: []byte("x\n")},
		Gaps: []artifact.Gap{{What: "read the log of ml/a-head container ray-head", Reason: `forbidden: you cannot get pods/log in namespace "ml"; ask for RBAC verb "get" on "pods/log"`}}}, nil)
	c.Files = append([]artifact.File{{Path: "doctor.txt", About: "doctor's report"}}, c.Files...)
	s.Blind = nil
	got := Index(Header{Made: now, Namespace: "ml", Limits: artifact.LogLimits{Tail: 2000, LimitBytes: 1 << 20}}, c)
	golden.Assert(t, filepath.Join("testdata", "index.golden"), got)
}

// bundle raycronjob/NAME: the RayCronJob, the RayJobs it made (one whose cluster is gone too) and
// the clusters they hold, with their pods.
func TestMakePlanRayCronJob(t *testing.T) {
	s := scene()
	yes := true
	cronOwned := func(name, cluster string) rayv1.RayJob {
		return rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml",
			OwnerReferences: []metav1.OwnerReference{{Kind: ray.KindRayCronJob, Name: "nightly", Controller: &yes}}},
			Status: rayv1.RayJobStatus{RayClusterName: cluster}}
	}
	s.Jobs = append(s.Jobs, cronOwned("nightly-1", ""), cronOwned("nightly-2", "b"))
	s.Jobs[0].Status.RayClusterName = "" // the clusterSelector RayJob is not nightly's
	s.CronJobs = []ray.RayCronJob{{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ml"}}, {ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "ml"}}}
	p := MakePlan(s, &diagnose.Target{Kind: ray.KindRayCronJob, Name: "nightly"}, PlanOptions{})
	got := []string{
		names(p.CronJobs, func(o *ray.RayCronJob) string { return o.Name }),
		names(p.Jobs, func(o *rayv1.RayJob) string { return o.Name }),
		names(p.Clusters, func(o *rayv1.RayCluster) string { return o.Name }),
		names(p.Pods, func(o *corev1.Pod) string { return o.Name }),
	}
	if want := "nightly | nightly-1,nightly-2 | b | b-head"; strings.Join(got, " | ") != want {
		t.Errorf("plan %q, want %q", strings.Join(got, " | "), want)
	}
}
