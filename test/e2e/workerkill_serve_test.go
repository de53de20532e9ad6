package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// TestChaosWorkerKillServeReplicas kills the workers that Ray's view says host Serve replicas, on
// KubeRay v1.6.0's real RayService controller: KubeRay's own ray-service.sample.yaml with three
// workers, on Ray 2.52.0 with token authentication (authOptions.mode token: the operator and
// worker-kill both send the Secret's token, and the stand-ins refuse reads without it,
// PlayDashboardTokenAuth), whose seven deployments the Ray stand-ins place on the first two workers by name
// (PlayServeReplicas; also PlayDashboardServeAPI, PlayAppsStartDeploying, PlayProxyRoutes,
// PlayPodLifetime). doctor's port-forward path reads the head's dashboard; the plan and the run
// kill exactly the two hosts, leave the third worker alone, name each host's replicas, and say
// that every deployment lost its replicas; the report's HTTP counts are what the stand-ins
// served; a text run kills one host by seed. kwok plays the kubelet. About 40 s.
func TestChaosWorkerKillServeReplicas(t *testing.T) {
	t.Parallel()
	h := newHOn(t, sandboxV160(t))
	ray := startRay(h, play.RayOptions{DeployTime: time.Second, ReplicaWorkers: 2})
	var outputs []string
	run := func(args ...string) Result {
		r := h.Run(args...)
		outputs = append(outputs, r.Stdout, r.Stderr)
		return r
	}
	cluster := h.createTokenRayService("rs", sandbox.OperatorV160, func(rs *rayv1.RayService) {
		rs.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0"}
		rs.Spec.RayClusterSpec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](3)
	})
	workers := h.waitReadyWorkers(cluster, 3, 60*time.Second, nil)
	h.waitServeEndpoints("rs-serve-svc", append([]string{h.headOf(cluster).Name}, workers...))
	hosts := ray.ReplicaPods(cluster)
	if strings.Join(hosts, ",") != strings.Join(workers[:2], ",") {
		t.Fatalf("the stand-ins place replicas on %v, want the first two workers of %v", hosts, workers)
	}
	bystander := h.pod(workers[2])
	args := []string{"chaos", "worker-kill", "rayservice/rs", "--serve-replicas", "--path", "/fruit", "--rate", "40/s", "--warmup", "2s"}

	// More than the hosts: exit 2, nothing killed.
	if res := run(append(args, "--count", "3", "--yes")...); res.Code != 2 || !strings.Contains(res.Stderr, "--count 3 is more than the 2 live workers hosting Serve replicas") {
		t.Errorf("--count 3 of 2 hosts: want exit 2, got %s", res)
	}

	// The plan names the two hosts and their replicas, read from the head's dashboard.
	res := run(append(args, "--dry-run", "-o", "json")...)
	var plan struct {
		Kind          string
		Kill          []string
		ServeReplicas map[string][]string
	}
	if err := json.Unmarshal([]byte(res.Stdout), &plan); res.Code != 0 || err != nil || plan.Kind != "WorkerKillPlan" {
		t.Fatalf("dry run: %v %s", err, res)
	}
	want := []string{h.NS + "/" + hosts[0], h.NS + "/" + hosts[1]}
	replicas := 0
	for _, k := range want {
		replicas += len(plan.ServeReplicas[k])
	}
	if fmt.Sprint(plan.Kill) != fmt.Sprint(want) || replicas != 7 {
		t.Errorf("plan kills %v with replicas %v; want %v with the sample's 7 deployments' replicas", plan.Kill, plan.ServeReplicas, want)
	}
	if res := run(append(args, "--dry-run")...); res.Code != 0 || !strings.Contains(res.Stdout, "among those Ray's view says host Serve replicas") ||
		!strings.Contains(res.Stdout, "Serve replicas: fruit_app/") {
		t.Errorf("dry run text: %s", res)
	} else {
		save("worker-kill-serve-replicas-dry-run.txt", res.Stdout)
	}

	// The run: exactly the hosts are killed, the bystander stays, KubeRay replaces both.
	before := time.Now()
	res = run(append(args, "--until-recovered", "--timeout", "90s", "-o", "json", "--yes")...)
	r := &workerKillReport{}
	var more struct { // what this test reads beyond workerKillReport
		Totals struct{ ByStatus map[string]int }
		Kill   struct{ ServeReplicas map[string][]string }
		Advice []struct{ Rule, Text string }
	}
	if err := json.Unmarshal([]byte(res.Stdout), r); err != nil || r.Kind != "WorkerKillReport" {
		t.Fatalf("not a WorkerKillReport (%v): %s", err, res)
	}
	if err := json.Unmarshal([]byte(res.Stdout), &more); err != nil {
		t.Fatal(err)
	}
	var killed []string
	for _, p := range r.Kill.Pods {
		killed = append(killed, p.Pod)
	}
	if fmt.Sprint(killed) != fmt.Sprint(want) || fmt.Sprint(more.Kill.ServeReplicas) != fmt.Sprint(plan.ServeReplicas) {
		t.Errorf("killed %v with replicas %v; the plan named %v with %v", killed, more.Kill.ServeReplicas, want, plan.ServeReplicas)
	}
	if now := h.pod(workers[2]); now == nil || now.UID != bystander.UID || now.DeletionTimestamp != nil {
		t.Errorf("worker %s hosts no replica and was touched", workers[2])
	}
	if !hasAdvice(more.Advice, "all-replicas-killed") {
		t.Errorf("no all-replicas-killed advice: %+v", more.Advice)
	}
	_, served := ray.Tally(before, false)
	if fmt.Sprint(httpCodes(more.Totals.ByStatus)) != fmt.Sprint(served) {
		t.Errorf("report counts %v; the stand-ins served %v", more.Totals.ByStatus, served)
	}
	if err := ray.Err(); err != nil {
		t.Errorf("Ray stand-ins: %v", err)
	}
	t.Logf("worker-kill --serve-replicas: killed %v; %d requests, %d errors", killed, r.Totals.Requests, r.Totals.Errors)

	// Text, for docs/chaos-worker-kill.md: one of the hosts now, by seed.
	h.waitReadyWorkers(cluster, 3, 60*time.Second, func() bool { return len(ray.ReplicaPods(cluster)) == 2 })
	hosts = ray.ReplicaPods(cluster)
	res = run(append(args, "--count", "1", "--seed", "5", "--after", "3s", "--yes")...)
	save("worker-kill-serve-replicas.txt", res.Stdout)
	if res.Code != 0 || !strings.Contains(res.Stdout, "(seed 5), among those Ray's view says host Serve replicas") ||
		!(strings.Contains(res.Stdout, "  "+h.NS+"/"+hosts[0]+"  Serve replicas: ") || strings.Contains(res.Stdout, "  "+h.NS+"/"+hosts[1]+"  Serve replicas: ")) {
		t.Errorf("text report should kill one of the hosts %v and name its replicas: %s", hosts, res)
	}
	// The cluster runs Ray's token authentication: the plan's and the run's reads of the dashboard
	// sent the token of the operator's Secret, which no output holds.
	token := h.clusterToken(cluster)
	for _, out := range outputs {
		if strings.Contains(out, token) {
			t.Fatalf("the token is in an output of chaos worker-kill:\n%s", out)
		}
	}
}

// pod is the pod named name now, nil when it is gone.
func (h *H) pod(name string) *metav1.ObjectMeta {
	h.T.Helper()
	p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return &p.ObjectMeta
}

func hasAdvice(advice []struct{ Rule, Text string }, rule string) bool {
	for _, a := range advice {
		if a.Rule == rule {
			return true
		}
	}
	return false
}
