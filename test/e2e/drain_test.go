package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// drainReport is the part of chaos drain's JSON report the tests read.
type drainReport struct {
	Kind   string
	Totals struct{ Requests, Errors, Status2xx int }
	Drain  struct {
		Node            string
		AlreadyCordoned bool
		Uncordoned      bool
		Pods            []struct {
			Pod, Outcome, RefusedBy string
			Ray                     bool
			Refusals                int
			GoneMs                  *float64
		}
		Replacements []struct {
			Pod, What, Node string
			ReadyMs         *float64
		}
	}
	Advice []struct{ Rule, Text string }
}

func parseDrainReport(t *testing.T, res Result) *drainReport {
	t.Helper()
	r := &drainReport{}
	if err := json.Unmarshal([]byte(res.Stdout), r); err != nil || r.Kind != "DrainReport" {
		t.Fatalf("not a DrainReport (%v): %s", err, res)
	}
	return r
}

// TestChaosDrain drains the node of a worker under the probe, on the sandbox's real operator
// (KubeRay v1.1.1) and API server: the head on a node of its own, the worker on a second node of
// a pool, a third node of that pool empty. The API server's Eviction API, the disruption
// controller and the scheduler are real; kwok plays the kubelet (it ends an evicted pod, and runs
// the new one); the serve scene's stand-ins play Ray Serve (docs/sandbox.md: a pod's proxy stops
// answering when its deletion starts). About 60 s.
func TestChaosDrain(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	headNode := h.ownNode("dh-" + h.NS)
	pool := []string{h.ownNode("dp1-" + h.NS)}
	h.labelPool(pool[0])
	h.CreateRayCluster("dr", func(rc *rayv1.RayCluster) {
		pinPod(&rc.Spec.HeadGroupSpec.Template.Spec, headNode)
		w := &rc.Spec.WorkerGroupSpecs[0].Template.Spec
		pinPod(w, pool[0])
		w.NodeSelector = map[string]string{poolLabel: h.NS}
	})
	h.WaitClusterRunning("dr", 120*time.Second)
	worker := h.Pods("dr", "worker")[0]
	if worker.Spec.NodeName != pool[0] {
		t.Fatalf("worker %s on %q, want %s", worker.Name, worker.Spec.NodeName, pool[0])
	}
	// The node the replacement can go to, created once the worker is on the first.
	pool = append(pool, h.ownNode("dp2-"+h.NS))
	h.labelPool(pool[1])
	sc := newServeScene(h, "dr", 2*time.Second)
	sc.waitServing(2)
	args := []string{"chaos", "drain", "--node-of", "raycluster/dr", "--role", "worker", "--service", sc.service, "--port", "8000",
		"--delete-emptydir-data", "--rate", "40/s", "--warmup", "2s"}

	// Without --delete-emptydir-data kubectl's drain library refuses the worker (its /dev/shm and
	// log emptyDirs): exit 2, nothing cordoned.
	res := h.Run("chaos", "drain", pool[0], "--service", sc.service, "--port", "8000", "--yes")
	if res.Code != 2 || !strings.Contains(res.Stderr, "cannot drain node "+pool[0]) || !strings.Contains(res.Stderr, "--delete-emptydir-data") {
		t.Errorf("emptyDir without --delete-emptydir-data: want exit 2 naming the flag, got %s", res)
	}
	notCordoned(h, pool[0])

	// --dry-run: the plan, nothing cordoned or evicted, no request.
	before := time.Now()
	res = h.Run(append(args, "--dry-run")...)
	save("drain-dry-run.txt", res.Stdout)
	if res.Code != 0 {
		t.Fatalf("dry run: %s", res)
	}
	for _, want := range []string{
		"Dry run of a drain of node " + pool[0],
		"Node:         " + pool[0] + ", which runs raycluster/dr's worker",
		"  " + h.NS + "/" + worker.Name + " (Ray worker)",
		"no PodDisruptionBudget covers these pods",
		"The API server accepted a dry run of the cordon and of each evict.",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, res.Stdout)
		}
	}
	notCordoned(h, pool[0])
	if _, total, _ := sc.tally(before); len(total) != 0 {
		t.Fatalf("dry run sent traffic: %v", total)
	}

	// The role docs/rbac.md gives chaos drain is enough for the dry run (every read, and the API
	// server's dry run of the cordon and the eviction); without it, exit 4 naming the verb.
	applier, err := sandbox.NewApplier(h.SB.Admin)
	if err != nil {
		t.Fatal(err)
	}
	applyDocRoles(h, applier)
	drainer := "drainer-" + h.NS
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: drainer},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "kubectl-ray:chaos-drain"},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: drainer}}}
	if _, err := h.Kube.RbacV1().ClusterRoleBindings().Create(h.Ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = h.Kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), drainer, metav1.DeleteOptions{})
	})
	if res := h.Run(append([]string{"--as", drainer}, append(args, "--dry-run")...)...); res.Code != 0 {
		t.Errorf("dry run with docs/rbac.md's chaos-drain role: %s", res)
	}
	if res := h.Run(append([]string{"--as", "nobody-" + h.NS}, append(args, "--dry-run")...)...); res.Code != 4 || !strings.Contains(res.Stderr, "forbidden") {
		t.Errorf("dry run with no role: want exit 4 naming the verb, got %s", res)
	}
	notCordoned(h, pool[0])

	// A budget that allows no disruption: every eviction is refused (429) and asked again until
	// --timeout; the worker stays, the node is uncordoned, exit 3 names the budget.
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "dr-workers", Namespace: h.NS},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ray.io/cluster": "dr", "ray.io/node-type": "worker"}}}}
	if _, err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Create(h.Ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the disruption controller to count the PDB's pods", 30*time.Second, func() (bool, error) {
		p, err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Get(h.Ctx, "dr-workers", metav1.GetOptions{})
		return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy == 1 && p.Status.DisruptionsAllowed == 0, err
	})
	res = h.Run(append(args, "--after", "7s", "--timeout", "6s", "-o", "json", "--yes")...)
	save("drain-pdb.txt", res.Stderr)
	if res.Code != 3 || !strings.Contains(res.Stderr, "was not drained") || !strings.Contains(res.Stderr, "PodDisruptionBudget dr-workers") {
		t.Fatalf("drain against a blocking PDB: want exit 3 naming the budget, got %s", res)
	}
	r := parseDrainReport(t, res)
	if len(r.Drain.Pods) != 1 || r.Drain.Pods[0].Outcome != "refused" || r.Drain.Pods[0].Refusals < 2 || !r.Drain.Uncordoned {
		t.Errorf("refused drain: want one pod refused at least twice (retried every 5s) and the node uncordoned, got %+v", r.Drain)
	}
	notCordoned(h, pool[0])
	if p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, worker.Name, metav1.GetOptions{}); err != nil || p.UID != worker.UID || p.DeletionTimestamp != nil {
		t.Fatalf("the budget's pod was touched: %v %+v", err, p)
	}
	if err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Delete(h.Ctx, "dr-workers", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// A budget the disruption controller cannot compute: maxUnavailable over Ray pods, whose owner
	// (a RayCluster) has no scale subresource. The real controller says SyncFailed and allows
	// nothing, and the Eviction API answers every eviction "still being processed" with a
	// Retry-After. The drain is refused in its plan, naming the budget and why, nothing cordoned,
	// and its dry run does not wait on the budget (client-go's own retries of that 429 are off).
	// About 5 s.
	pdb = &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "dr-uncomputable", Namespace: h.NS},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ray.io/cluster": "dr", "ray.io/node-type": "worker"}}}}
	if _, err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Create(h.Ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the disruption controller to give up on the PDB (SyncFailed)", 30*time.Second, func() (bool, error) {
		p, err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Get(h.Ctx, "dr-uncomputable", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(p.Status.Conditions, policyv1.DisruptionAllowedCondition)
		return c != nil && c.Reason == policyv1.SyncFailedReason, nil
	})
	for _, extra := range [][]string{{"--dry-run"}, {"--yes", "--timeout", "20s"}} {
		res = h.Run(append(args, extra...)...)
		if res.Code != 2 || !strings.Contains(res.Stderr, "PodDisruptionBudget "+h.NS+"/dr-uncomputable") ||
			!strings.Contains(res.Stderr, "can never allow an eviction") || !strings.Contains(res.Stderr, "nothing was cordoned") {
			t.Errorf("%v with a budget that cannot be computed: want exit 2 naming it, got %s", extra, res)
		}
		notCordoned(h, pool[0])
	}
	if err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Delete(h.Ctx, "dr-uncomputable", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// The cordon's reply is lost (the proxy cuts the connection after the API server applied
	// it): the run cannot know from the reply that it cordoned, reads the node back, and
	// uncordons it as it ends. Nothing is evicted. About 5 s.
	proxy := newAPIProxy(t, h.SB)
	proxy.loseCordons = true
	res = h.exec(env.bin, append([]string{"--kubeconfig", proxy.kubeconfig, "-n", h.NS}, append(args, "--timeout", "20s", "--yes")...), nil)
	if res.Code == 0 || proxy.lostCordons == 0 {
		t.Errorf("a drain whose cordon reply was lost: want a failed run after a lost cordon, got %d lost, %s", proxy.lostCordons, res)
	}
	notCordoned(h, pool[0])
	if p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, worker.Name, metav1.GetOptions{}); err != nil || p.UID != worker.UID || p.DeletionTimestamp != nil {
		t.Fatalf("a run that failed at its cordon evicted the worker: %v %+v", err, p)
	}

	// The drain: the worker evicted and gone, KubeRay's new worker on the other pool node and
	// Ready, the node uncordoned; the report's request count is what the stand-ins served.
	before = time.Now()
	res = h.Run(append(args, "--until-recovered", "--timeout", "60s", "-o", "json", "--yes")...)
	if res.Code != 0 {
		t.Fatalf("drain: %s", res)
	}
	r = parseDrainReport(t, res)
	if r.Drain.Node != pool[0] || len(r.Drain.Pods) != 1 || r.Drain.Pods[0].Outcome != "gone" || !r.Drain.Pods[0].Ray || !r.Drain.Uncordoned {
		t.Errorf("drain section: %+v", r.Drain)
	}
	var back bool
	for _, p := range r.Drain.Replacements {
		if strings.Contains(p.What, "worker") && p.Node == pool[1] && p.ReadyMs != nil {
			back = true
		}
	}
	if !back {
		t.Errorf("no new worker Ready on %s in the report: %+v", pool[1], r.Drain.Replacements)
	}
	_, total, _ := sc.tally(before)
	served := 0
	for _, n := range total {
		served += n
	}
	if ok := total["200"]; r.Totals.Status2xx != ok || served > r.Totals.Requests {
		t.Errorf("report says %d 2xx of %d requests; the stand-ins served %v", r.Totals.Status2xx, r.Totals.Requests, total)
	}
	notCordoned(h, pool[0])
	var noBudget bool
	for _, a := range r.Advice {
		noBudget = noBudget || a.Rule == "no-budget" || a.Rule == "no-errors"
	}
	if !noBudget {
		t.Errorf("advice: want no-budget (errors) or no-errors, got %+v", r.Advice)
	}
	t.Logf("drain: %d requests, %d errors", r.Totals.Requests, r.Totals.Errors)

	// The node of the head, in text: the head is pinned to its node, so KubeRay's new head waits
	// unscheduled while the node is cordoned, and is scheduled once the run uncordons it.
	h.WaitClusterRunning("dr", 60*time.Second)
	sc.waitServing(2)
	res = h.Run("chaos", "drain", "--node-of", "raycluster/dr", "--role", "head", "--service", sc.service, "--port", "8000",
		"--delete-emptydir-data", "--rate", "40/s", "--warmup", "2s", "--after", "4s", "--yes")
	save("drain-head.txt", res.Stdout)
	if res.Code != 0 {
		t.Fatalf("drain of the head's node: %s", res)
	}
	for _, want := range []string{
		"Drain of node " + headNode + ", which runs raycluster/dr's head (evict)",
		"Drain of node " + headNode + " (from the cordon)",
		"uncordoned when the run ended",
		"[observed head-on-node] The head pod " + h.NS + "/",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("head drain report lacks %q:\n%s", want, res.Stdout)
		}
	}
	notCordoned(h, headNode)
	h.WaitClusterRunning("dr", 60*time.Second)

	// Ctrl-C once the node is cordoned: the run ends with the report of what was seen (exit 130)
	// and the node is uncordoned, as on any other end.
	sc.waitServing(2)
	h.ctrlCDrain(headNode, "--node-of", "raycluster/dr", "--role", "head", "--service", sc.service, "--port", "8000",
		"--delete-emptydir-data", "--rate", "40/s", "--warmup", "2s", "--after", "60s", "--yes")
	notCordoned(h, headNode)
	h.WaitClusterRunning("dr", 60*time.Second)

	// A node that runs no Ray pod, only a bare pod: refused, naming the flag that drains it
	// anyway (exit 5), nothing cordoned; with --any-pods the dry run plans that pod's eviction.
	other := h.ownNode("dx-" + h.NS)
	notRay := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "not-ray"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	pinPod(&notRay.Spec, other)
	if _, err := h.Kube.CoreV1().Pods(h.NS).Create(h.Ctx, notRay, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("pod not-ray Running", 60*time.Second, func() (bool, error) {
		p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, "not-ray", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
	// No controller manages it: kubectl's drain library refuses it without --force (exit 2).
	res = h.Run("chaos", "drain", other, "--service", sc.service, "--port", "8000", "--yes")
	wantOneLineError(t, res, 2)
	if want := "error: cannot drain node " + other + ": cannot delete Pods that declare no controller (use --force to override): " + h.NS + "/not-ray\n"; res.Stderr != want {
		t.Errorf("drain of a pod no controller manages: got %q, want %q", res.Stderr, want)
	}
	res = h.Run("chaos", "drain", other, "--force", "--service", sc.service, "--port", "8000", "--yes")
	wantOneLineError(t, res, 5)
	if want := "error: node " + other + " runs no Ray pod (1 other pod): nothing was cordoned; pass --any-pods to drain it anyway\n"; res.Stderr != want {
		t.Errorf("drain of a node without Ray pods: got %q, want %q", res.Stderr, want)
	}
	notCordoned(h, other)
	res = h.Run("chaos", "drain", other, "--force", "--any-pods", "--dry-run", "--service", sc.service, "--port", "8000")
	if res.Code != 0 || !strings.Contains(res.Stdout, h.NS+"/not-ray") {
		t.Errorf("dry run with --any-pods: want the plan naming %s/not-ray, got %s", h.NS, res)
	}
	notCordoned(h, other)

	// Through kubectl's plugin discovery: a node that does not exist is refused, nothing changed.
	res = h.Kubectl("ray", "chaos", "drain", headNode+"-none", "--service", sc.service, "--port", "8000", "--yes")
	if res.Code != 5 || !strings.Contains(res.Stderr, "not found") {
		t.Errorf("kubectl ray chaos drain of a node that does not exist: want exit 5, got %s", res)
	}
}

// ctrlCDrain runs chaos drain with args, interrupts it as Ctrl-C does once node is cordoned, and
// fails unless it exits 130 saying it was interrupted.
func (h *H) ctrlCDrain(node string, args ...string) {
	h.T.Helper()
	cmd := exec.Command(env.bin, append([]string{"chaos", "drain", "--kubeconfig", h.SB.Kubeconfig(), "-n", h.NS}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		h.T.Fatal(err)
	}
	h.WaitFor("node "+node+" cordoned by the drain", 60*time.Second, func() (bool, error) {
		n, err := h.Kube.CoreV1().Nodes().Get(h.Ctx, node, metav1.GetOptions{})
		return err == nil && n.Spec.Unschedulable, err
	})
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(res.Stderr, "interrupted: the report above covers what was seen; node "+node+" was uncordoned") {
		h.T.Errorf("Ctrl-C during the drain: want exit 130, the report and the node uncordoned; got %v: %s", err, res)
	}
}

// notCordoned fails the test if node is cordoned.
func notCordoned(h *H, node string) {
	h.T.Helper()
	n, err := h.Kube.CoreV1().Nodes().Get(h.Ctx, node, metav1.GetOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	if n.Spec.Unschedulable {
		h.T.Errorf("node %s is cordoned", node)
	}
}

// poolLabel marks the nodes of a test's pool (labelPool), which a worker group selects.
const poolLabel = "e2e.kubectl-ray/pool"

// labelPool puts node in the test's pool: poolLabel set to the test's namespace.
func (h *H) labelPool(node string) {
	h.T.Helper()
	patch := []byte(`{"metadata":{"labels":{"` + poolLabel + `":"` + h.NS + `"}}}`)
	if _, err := h.Kube.CoreV1().Nodes().Patch(h.Ctx, node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		h.T.Fatal(err)
	}
}
