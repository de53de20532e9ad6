package e2e

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// workerKillReport is the part of chaos worker-kill's JSON report the test reads.
type workerKillReport struct {
	Kind     string
	Settings struct{ Seed int64 }
	Totals   struct{ Requests, Errors, Status2xx int }
	Kill     struct {
		Group        string
		LiveWorkers  int
		Pods         []struct{ Pod, Outcome string }
		Replacements []struct {
			Pod, What string
			ReadyMs   *float64
		}
	}
}

// TestChaosWorkerKill kills two of three workers by count, chosen by a seed, under the probe, on
// the sandbox's real operator (KubeRay v1.1.1): the dry run names the workers the seed picks, the
// run kills exactly those, KubeRay recreates them (at least two new workers Ready), and the report's 2xx count is
// what the stand-ins served. kwok plays the kubelet; the serve scene's stand-ins play Ray Serve (a
// killed worker's proxy stops answering when its deletion starts). About 20 s.
func TestChaosWorkerKill(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	node := h.ownNode("wk-" + h.NS)
	h.CreateRayCluster("wk", func(rc *rayv1.RayCluster) {
		pinCluster(rc, node)
		rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](3)
	})
	h.waitReadyWorkers("wk", 3, 120*time.Second, nil)
	sc := newServeScene(h, "wk", 2*time.Second)
	sc.waitServing(4)
	args := []string{"chaos", "worker-kill", "wk", "--count", "2", "--seed", "7", "--service", sc.service, "--port", "8000", "--rate", "40/s", "--warmup", "2s"}

	// More than the group has: exit 2, nothing killed.
	if res := h.Run("chaos", "worker-kill", "wk", "--count", "4", "--service", sc.service, "--port", "8000", "--yes"); res.Code != 2 ||
		!strings.Contains(res.Stderr, "--count 4 is more than the 3 live workers of group") {
		t.Errorf("--count 4 of 3: want exit 2, got %s", res)
	}

	// --serve-replicas needs Ray's view, and this head's dashboard does not answer (the serve
	// scene's stand-ins play only Serve's port): exit 3, nothing killed.
	if res := h.Run("chaos", "worker-kill", "wk", "--serve-replicas", "--service", sc.service, "--port", "8000", "--yes"); res.Code != 3 ||
		!strings.Contains(res.Stderr, "dashboard of head") || !strings.Contains(res.Stderr, "nothing was killed") {
		t.Errorf("--serve-replicas without a dashboard: want exit 3, got %s", res)
	}

	// --dry-run -o json: which two seed 7 picks.
	before := time.Now()
	res := h.Run(append(args, "--dry-run", "-o", "json")...)
	var plan struct {
		Kind string
		Kill []string
	}
	if err := json.Unmarshal([]byte(res.Stdout), &plan); res.Code != 0 || err != nil || plan.Kind != "WorkerKillPlan" || len(plan.Kill) != 2 {
		t.Fatalf("dry run: %v %+v %s", err, plan, res)
	}
	if res := h.Run(append(args, "--dry-run")...); res.Code != 0 || !strings.Contains(res.Stdout, "chosen with seed 7") {
		t.Errorf("dry run text: %s", res)
	} else {
		save("worker-kill-dry-run.txt", res.Stdout)
	}
	if _, total, _ := sc.tally(before); len(total) != 0 {
		t.Fatalf("dry run sent traffic: %v", total)
	}
	if n := len(h.Pods("wk", "worker")); n != 3 {
		t.Fatalf("dry run changed the workers: %d", n)
	}

	// The run, through kubectl's plugin discovery: the two the plan named are killed and gone,
	// two new workers are Ready.
	before = time.Now()
	res = h.Kubectl(append([]string{"ray", "--kubeconfig", h.SB.Kubeconfig(), "-n", h.NS}, append(args, "--until-recovered", "--timeout", "60s", "-o", "json", "--yes")...)...)
	if res.Code != 0 {
		t.Fatalf("kubectl ray chaos worker-kill: %s", res)
	}
	r := &workerKillReport{}
	if err := json.Unmarshal([]byte(res.Stdout), r); err != nil || r.Kind != "WorkerKillReport" {
		t.Fatalf("not a WorkerKillReport (%v): %s", err, res)
	}
	var killed []string
	for _, p := range r.Kill.Pods {
		killed = append(killed, p.Pod)
		if p.Outcome != "gone" {
			t.Errorf("worker %s: outcome %s, want gone", p.Pod, p.Outcome)
		}
	}
	if strings.Join(killed, " ") != strings.Join(plan.Kill, " ") || r.Settings.Seed != 7 || r.Kill.LiveWorkers != 3 {
		t.Errorf("killed %v (seed %d, of %d), the plan named %v", killed, r.Settings.Seed, r.Kill.LiveWorkers, plan.Kill)
	}
	ready := 0
	for _, p := range r.Kill.Replacements {
		if strings.HasPrefix(p.What, "worker") && p.ReadyMs != nil {
			ready++
		}
	}
	// At least the two killed are replaced. The real operator may overshoot: once in CI
	// (2026-12-04) KubeRay v1.1.1 created three new workers for the two killed and then deleted
	// extras to get back to three (two of the report's three new pods were gone at the end); the
	// report, which follows every new pod, showed all three Ready, which is what happened.
	if ready < 2 {
		t.Errorf("%d new workers Ready in the report, want at least 2: %+v", ready, r.Kill.Replacements)
	}
	_, total, _ := sc.tally(before)
	if r.Totals.Status2xx != total["200"] {
		t.Errorf("report says %d 2xx; the stand-ins served %v", r.Totals.Status2xx, total)
	}
	for _, name := range plan.Kill {
		pod := name[strings.Index(name, "/")+1:]
		if _, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, pod, metav1.GetOptions{}); err == nil {
			t.Errorf("killed worker %s still exists", pod)
		}
	}
	t.Logf("worker-kill: %d requests, %d errors", r.Totals.Requests, r.Totals.Errors)

	// Text, for docs/chaos-worker-kill.md.
	h.waitReadyWorkers("wk", 3, 60*time.Second, nil)
	sc.waitServing(4)
	res = h.Run("chaos", "worker-kill", "wk", "--count", "1", "--seed", "3", "--service", sc.service, "--port", "8000", "--rate", "40/s",
		"--warmup", "2s", "--after", "3s", "--yes")
	save("worker-kill.txt", res.Stdout)
	if res.Code != 0 || !strings.Contains(res.Stdout, "Workers killed (from the kill)") || !strings.Contains(res.Stdout, "(seed 3)") {
		t.Errorf("text report: %s", res)
	}
}

// waitReadyWorkers waits until cluster has n workers Running and Ready, and also until more(),
// when given; it returns their names, sorted.
func (h *H) waitReadyWorkers(cluster string, n int, timeout time.Duration, more func() bool) []string {
	h.T.Helper()
	var ready []string
	h.WaitFor(fmt.Sprintf("%d workers of %s Running and Ready", n, cluster), timeout, func() (bool, error) {
		ready = ready[:0]
		for _, p := range h.Pods(cluster, "worker") {
			if PodRunningReady(&p) {
				ready = append(ready, p.Name)
			}
		}
		return len(ready) == n && (more == nil || more()), nil
	})
	sort.Strings(ready)
	return ready
}
