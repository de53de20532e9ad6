package workerkill

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/rayapi"
)

// replicaFake is a cluster of one head (10.0.0.1) and workers w-a..w-d (10.0.0.2..5) of group
// small, whose dashboard answers view; the embedded Cluster is nil (any other call panics).
type replicaFake struct {
	Cluster
	view  rayapi.View
	heads []corev1.Pod
	read  []string // the heads whose dashboard was read
}

func pod(name, ip string, labels map[string]string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, Labels: labels},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip}}
}

func newReplicaFake(view rayapi.View) *replicaFake {
	head := pod("demo-head", "10.0.0.1", map[string]string{ray.LabelNodeType: ray.NodeTypeHead})
	return &replicaFake{view: view, heads: []corev1.Pod{head}}
}

func (f *replicaFake) GetRayCluster(_ context.Context, ns, name string) (*rayv1.RayCluster, error) {
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	rc.Spec.WorkerGroupSpecs = []rayv1.WorkerGroupSpec{{GroupName: "small"}}
	return rc, nil
}

func (f *replicaFake) ListPodsMatching(_ context.Context, _, selector string) ([]corev1.Pod, error) {
	if strings.Contains(selector, ray.NodeTypeHead) {
		return f.heads, nil
	}
	var out []corev1.Pod
	for i, n := range []string{"w-a", "w-b", "w-c", "w-d"} {
		out = append(out, pod(n, fmt.Sprintf("10.0.0.%d", i+2), nil))
	}
	return out, nil
}

func (f *replicaFake) ReadRayView(_ context.Context, head *corev1.Pod, _ time.Duration) rayapi.View {
	f.read = append(f.read, head.Name)
	return f.view
}

// serveView is a dashboard's Serve view: app "fruit" with deployments placed as given
// (deployment -> node IPs of its replicas; "!" before an IP marks a STOPPING replica).
func serveView(placed map[string][]string) rayapi.View {
	app := rayapi.App{Name: "fruit", Status: "RUNNING"}
	for d, ips := range placed {
		dep := rayapi.Deployment{Name: d, Status: "HEALTHY"}
		for i, ip := range ips {
			state := "RUNNING"
			if strings.HasPrefix(ip, "!") {
				state, ip = "STOPPING", ip[1:]
			}
			dep.Replicas = append(dep.Replicas, rayapi.Replica{ID: fmt.Sprintf("r%d", i), State: state, NodeIP: ip})
		}
		app.Deployments = append(app.Deployments, dep)
	}
	return rayapi.View{GCSAlive: true, AppsRead: true, Apps: []rayapi.App{app}}
}

func resolveReplicas(t *testing.T, f *replicaFake, s Settings) (*target, error) {
	t.Helper()
	s.Namespace, s.Cluster, s.Target, s.ServeReplicas = "ml", "demo", "http://serve.example:8000", true
	return resolve(context.Background(), f, &s)
}

// Alone, --serve-replicas picks every worker of the group a replica runs on, by its pod IP; the
// head's replicas and stopping ones do not count, and each chosen worker carries its replicas.
func TestServeReplicasPicksTheHosts(t *testing.T) {
	f := newReplicaFake(serveView(map[string][]string{
		"Mango":  {"10.0.0.2", "10.0.0.1"},
		"Orange": {"10.0.0.4", "!10.0.0.5"},
	}))
	tg, err := resolveReplicas(t, f, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if got := podNames(tg.chosen); got != "w-a, w-c" {
		t.Errorf("chose %s, want the hosts w-a, w-c (w-d's replica is stopping, the head is no worker)", got)
	}
	if got := fmt.Sprint(tg.chosenReplicas()); got != "map[ml/w-a:[fruit/Mango#r0] ml/w-c:[fruit/Orange#r0]]" {
		t.Errorf("replicas of the chosen: %s", got)
	}
	if strings.Join(f.read, ",") != "demo-head" {
		t.Errorf("dashboards read: %v, want the head's once", f.read)
	}
	// Mango keeps its replica on the head; Orange had its only live one on w-c.
	if got := strings.Join(tg.wipedOut(), ","); got != "fruit/Orange" {
		t.Errorf("deployments left without a replica: %q, want fruit/Orange", got)
	}
}

// With --count, that many of the hosts, by seed; more than the hosts is bad input.
func TestServeReplicasWithCount(t *testing.T) {
	f := newReplicaFake(serveView(map[string][]string{"Mango": {"10.0.0.2", "10.0.0.3", "10.0.0.4"}}))
	tg, err := resolveReplicas(t, f, Settings{Count: 2, Seed: 3})
	if err != nil || len(tg.chosen) != 2 {
		t.Fatalf("count 2: %v, %+v", err, tg)
	}
	for _, p := range tg.chosen {
		if p.Name == "w-d" {
			t.Errorf("chose w-d, which hosts no replica")
		}
	}
	if len(tg.wipedOut()) != 0 {
		t.Errorf("Mango keeps a replica: %v", tg.wipedOut())
	}
	_, err = resolveReplicas(t, f, Settings{Count: 4})
	if fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), "4 is more than the 3 live workers hosting Serve replicas of group small") {
		t.Errorf("count 4 of 3 hosts: %v", err)
	}
}

// Nothing is killed when Ray cannot say where the replicas are, or says none is on a worker.
func TestServeReplicasRefusesWithoutRaysView(t *testing.T) {
	for name, tc := range map[string]struct {
		view  rayapi.View
		heads []corev1.Pod
		kind  fault.Kind
		want  string
	}{
		"unreachable": {view: rayapi.View{Unreachable: &rayapi.Unreachable{Reason: rayapi.Timeout, Detail: "the dashboard did not answer"}},
			kind: fault.API, want: "could not read Serve's replicas from the dashboard of head ml/demo-head (timeout): the dashboard did not answer; nothing was killed"},
		"no serve": {view: rayapi.View{GCSAlive: true, Failed: []string{"GET /api/serve/applications/: HTTP 501"}},
			kind: fault.API, want: "did not list Serve's applications (GET /api/serve/applications/: HTTP 501)"},
		"none on workers": {view: serveView(map[string][]string{"Mango": {"10.0.0.1"}}),
			kind: fault.NotFound, want: "places no Serve replica on any of the 4 live workers of group small"},
		"no head": {view: serveView(nil), heads: []corev1.Pod{}, kind: fault.NotFound, want: "has no Running head to read Serve's replicas from"},
	} {
		f := newReplicaFake(tc.view)
		if tc.heads != nil {
			f.heads = tc.heads
		}
		_, err := resolveReplicas(t, f, Settings{})
		if fault.KindOf(err) != tc.kind || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v (kind %v), want kind %v and %q", name, err, fault.KindOf(err), tc.kind, tc.want)
		}
	}
}

// --count and --percent together, or none of them and no --serve-replicas, is bad input;
// --serve-replicas alone is enough.
func TestValidateHowMany(t *testing.T) {
	for _, tc := range []struct {
		count   int
		percent float64
		serve   bool
		want    string
	}{
		{1, 10, false, "not both"},
		{0, 0, false, "say which workers to kill: count N, percent P, or serve-replicas"},
		{0, 0, true, ""},
		{2, 0, true, ""},
	} {
		s := Settings{Mode: "delete", Count: tc.count, Percent: tc.percent, ServeReplicas: tc.serve}
		s.Target, s.After, s.Timeout = "http://serve.example:8000", time.Minute, time.Minute
		s.ProbeSettings = experiment.ProbeSettings{Rate: "50/s", Method: "GET", Warmup: time.Second, RequestTimeout: time.Second, ProgressEvery: time.Second}
		s.Defaults()
		err := s.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("count %d percent %v serve-replicas %v: %v, want %q", tc.count, tc.percent, tc.serve, err, tc.want)
		}
	}
}
