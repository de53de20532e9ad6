package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// TestChaosDrainRayServiceV160 drains, on KubeRay v1.6.0's real RayService controller, the node of
// a worker of a RayService (first against a PodDisruptionBudget that refuses, then for real), and
// the node of its head: KubeRay's own ray-service.sample.yaml, its head on a node of its own, its
// worker on a pool node whose sibling takes the replacement. The Eviction API, the disruption
// controller and the scheduler are real; kwok plays the kubelet; the Ray stand-ins play Serve
// (PlayDashboardServeAPI, PlayAppsStartDeploying, PlayHeadRestartLosesApps, PlayProxyHealth,
// PlayProxyLostController, PlayProxyRoutes, PlayPodLifetime). Every HTTP status the reports count
// is one a stand-in gave. About 45 s.
func TestChaosDrainRayServiceV160(t *testing.T) {
	t.Parallel()
	h := newHOn(t, sandboxV160(t))
	ray := startRay(h, play.RayOptions{DeployTime: time.Second})
	headNode := h.ownNode("dsh-" + h.NS)
	pool := []string{h.ownNode("dsp1-" + h.NS)}
	h.labelPool(pool[0])
	cluster := h.createLiveRayService("rs", sandbox.OperatorV160, func(rs *rayv1.RayService) {
		spec := &rs.Spec.RayClusterSpec
		spec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0"}
		pinPod(&spec.HeadGroupSpec.Template.Spec, headNode)
		w := &spec.WorkerGroupSpecs[0].Template.Spec
		pinPod(w, pool[0])
		w.NodeSelector = map[string]string{poolLabel: h.NS}
	})
	workers := h.waitReadyWorkers(cluster, 1, 60*time.Second, nil)
	worker := h.pod(workers[0])
	if p, _ := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, workers[0], metav1.GetOptions{}); p == nil || p.Spec.NodeName != pool[0] {
		t.Fatalf("worker %s not on %s", workers[0], pool[0])
	}
	pool = append(pool, h.ownNode("dsp2-"+h.NS))
	h.labelPool(pool[1])
	h.waitServeEndpoints("rs-serve-svc", []string{h.headOf(cluster).Name, workers[0]})
	args := []string{"chaos", "drain", "--node-of", "rayservice/rs", "--role", "worker", "--path", "/fruit",
		"--delete-emptydir-data", "--rate", "40/s", "--warmup", "2s"}

	// A budget that allows no disruption of the RayService's worker: refused until --timeout,
	// exit 3 naming the budget, the worker untouched, the node uncordoned.
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "rs-workers", Namespace: h.NS},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ray.io/cluster": cluster, "ray.io/node-type": "worker"}}}}
	if _, err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Create(h.Ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the disruption controller to count the PDB's pods", 30*time.Second, func() (bool, error) {
		p, err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Get(h.Ctx, "rs-workers", metav1.GetOptions{})
		return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy == 1 && p.Status.DisruptionsAllowed == 0, err
	})
	res := h.Run(append(args, "--after", "7s", "--timeout", "6s", "-o", "json", "--yes")...)
	if res.Code != 3 || !strings.Contains(res.Stderr, "PodDisruptionBudget rs-workers") {
		t.Fatalf("drain against a blocking PDB: want exit 3 naming the budget, got %s", res)
	}
	if r := parseDrainReport(t, res); len(r.Drain.Pods) != 1 || r.Drain.Pods[0].Outcome != "refused" || !strings.HasPrefix(r.Drain.Pods[0].RefusedBy, "PodDisruptionBudget rs-workers:") || !r.Drain.Uncordoned {
		t.Errorf("refused drain: want the worker refused by rs-workers and the node uncordoned, got %+v", r.Drain)
	}
	notCordoned(h, pool[0])
	if now := h.pod(workers[0]); now == nil || now.UID != worker.UID || now.DeletionTimestamp != nil {
		t.Fatalf("the budget's worker was touched")
	}
	if err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Delete(h.Ctx, "rs-workers", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// The worker's node: evicted and gone, KubeRay's new worker Ready on the other pool node.
	before := time.Now()
	res = h.Run(append(args, "--until-recovered", "--timeout", "60s", "-o", "json", "--yes")...)
	if res.Code != 0 {
		t.Fatalf("drain of the worker's node: %s", res)
	}
	r := parseDrainReport(t, res)
	if r.Drain.Node != pool[0] || len(r.Drain.Pods) != 1 || r.Drain.Pods[0].Outcome != "gone" || !r.Drain.Uncordoned {
		t.Errorf("drain section: %+v", r.Drain)
	}
	back := false
	for _, p := range r.Drain.Replacements {
		back = back || (strings.Contains(p.What, "worker") && p.Node == pool[1] && p.ReadyMs != nil)
	}
	if !back {
		t.Errorf("no new worker Ready on %s in the report: %+v", pool[1], r.Drain.Replacements)
	}
	checkServed(t, ray, before, res)
	notCordoned(h, pool[0])

	// The head's node: the head is pinned there, so KubeRay's new head waits unscheduled until the
	// run uncordons the node; the worker's proxy answers 502 meanwhile (the applications left with
	// the head), and the report says the head was on the node.
	h.WaitFor("RayService rs Ready again", 90*time.Second, func() (bool, error) { return h.rayServiceReady("rs") })
	h.waitServeEndpoints("rs-serve-svc", append([]string{h.headOf(cluster).Name}, h.waitReadyWorkers(cluster, 1, 60*time.Second, nil)...))
	before = time.Now()
	res = h.Run("chaos", "drain", "--node-of", "rayservice/rs", "--role", "head", "--path", "/fruit", "--delete-emptydir-data",
		"--rate", "40/s", "--warmup", "2s", "--after", "4s", "-o", "json", "--yes")
	if res.Code != 0 {
		t.Fatalf("drain of the head's node: %s", res)
	}
	r = parseDrainReport(t, res)
	if r.Drain.Node != headNode || !r.Drain.Uncordoned || !hasAdvice(r.Advice, "head-on-node") {
		t.Errorf("head drain: node %s uncordoned %v advice %+v", r.Drain.Node, r.Drain.Uncordoned, r.Advice)
	}
	checkServed(t, ray, before, res)
	notCordoned(h, headNode)
	if err := ray.Err(); err != nil {
		t.Errorf("Ray stand-ins: %v", err)
	}
}

// checkServed fails unless the report's HTTP status counts are what the Ray stand-ins served since
// before.
func checkServed(t *testing.T, ray *play.Ray, before time.Time, res Result) {
	t.Helper()
	var r struct {
		Totals struct{ ByStatus map[string]int }
	}
	if err := json.Unmarshal([]byte(res.Stdout), &r); err != nil {
		t.Fatal(err)
	}
	_, served := ray.Tally(before, false)
	if got := fmt.Sprint(httpCodes(r.Totals.ByStatus)); got != fmt.Sprint(served) {
		t.Errorf("report counts %s; the stand-ins served %v", got, served)
	}
}
