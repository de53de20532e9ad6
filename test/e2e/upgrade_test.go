package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// upgradeReport is the part of `chaos upgrade -o json` (UpgradeReport) the tests read.
type upgradeReport struct {
	Kind   string `json:"kind"`
	Totals struct {
		Requests int            `json:"requests"`
		Errors   int            `json:"errors"`
		Aborted  int            `json:"aborted"`
		ByStatus map[string]int `json:"byStatus"`
	} `json:"totals"`
	Upgrade struct {
		OldCluster              string   `json:"oldCluster"`
		NewCluster              string   `json:"newCluster"`
		PendingClusterCreatedMs *float64 `json:"pendingClusterCreatedMs"`
		NewHeadReadyMs          *float64 `json:"newHeadReadyMs"`
		ServeAppsReadyMs        *float64 `json:"serveAppsReadyMs"`
		ActiveSwitchedMs        *float64 `json:"activeSwitchedMs"`
		OldClusterDeletedMs     *float64 `json:"oldClusterDeletedMs"`
		Switched                bool     `json:"switched"`
		LastSeen                string   `json:"lastSeen"`
	} `json:"upgrade"`
	Endpoints []struct {
		Name     string         `json:"name"`
		ByStatus map[string]int `json:"byStatus"`
	} `json:"endpoints"`
	Verdict struct {
		Passed bool `json:"passed"`
	} `json:"verdict"`
}

// TestChaosUpgrade runs `kubectl ray chaos upgrade` against KubeRay v1.5.0's own RayService
// controller, with the Ray stand-ins of test/play playing Serve (PlayDashboardServeAPI,
// PlayAppsStartDeploying, PlayProxyRoutes; docs/sandbox.md): a --dry-run that changes nothing,
// refusals that change nothing (among them a RayService changed during the warm-up), healthy
// upgrades by --patch and by --image, and an upgrade whose new cluster's apps never become RUNNING
// (NeverRunning). $UPGRADE_SAVE_DIR keeps the outputs for docs/chaos-upgrade.md.
func TestChaosUpgrade(t *testing.T) {
	t.Parallel()
	h := newHOn(t, sandboxV150(t))
	var mu sync.Mutex
	blockNew := false
	allowed := map[string]bool{} // clusters whose apps may run once blockNew is set
	ray := startRay(h, play.RayOptions{DeployTime: time.Second, NeverRunning: func(cluster string) bool {
		mu.Lock()
		defer mu.Unlock()
		return blockNew && !allowed[cluster]
	}})
	zero := int32(0)
	old := h.createLiveRayService("up", "v1.5.0", func(rs *rayv1.RayService) { rs.Spec.RayClusterDeletionDelaySeconds = &zero })
	generation := func() int64 {
		rs, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "up", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return rs.Generation
	}

	// --dry-run: the plan, the server's dry run of the patch; the RayService is not changed.
	gen := generation()
	res := h.Run("chaos", "upgrade", "rayservice/up", "--image", "rayproject/ray:2.46.0-py311", "--path", "/fruit", "--dry-run")
	if res.Code != 0 || !strings.Contains(res.Stdout, "nothing is changed") || !strings.Contains(res.Stdout, "rayproject/ray:2.46.0-py311") ||
		!strings.Contains(res.Stdout, fmt.Sprintf("generation %d -> %d", gen, gen+1)) {
		t.Errorf("--dry-run: %s", res)
	}
	saveUpgrade("upgrade-dry-run.txt", res.Stdout)
	res = h.Run("chaos", "upgrade", "rayservice/up", "--image", "rayproject/ray:2.46.0-py311", "--dry-run", "-o", "json")
	var plan struct {
		Kind          string `json:"kind"`
		ActiveCluster string `json:"activeCluster"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &plan); err != nil || plan.Kind != "UpgradePlan" || plan.ActiveCluster != old {
		t.Errorf("--dry-run -o json: %v: %s", err, res)
	}
	// --patch: a change of rayClusterConfig is accepted; one that leaves the spec alone is refused.
	res = h.Run("chaos", "upgrade", "rayservice/up", "--patch", `{"spec":{"rayClusterConfig":{"rayVersion":"2.46.1"}}}`, "--dry-run")
	if res.Code != 0 || !strings.Contains(res.Stdout, fmt.Sprintf("generation %d -> %d", gen, gen+1)) {
		t.Errorf("--patch --dry-run: %s", res)
	}
	res = h.Run("chaos", "upgrade", "rayservice/up", "--patch", `{"metadata":{"labels":{"team":"ml"}}}`, "--yes")
	if res.Code != 2 || !strings.Contains(res.Stderr, "the patch changes nothing in the spec of RayService") || res.Stdout != "" {
		t.Errorf("a --patch that changes no spec: want exit 2 and nothing done: %s", res)
	}
	// Without --yes and with no terminal to ask (the test's stdin is not one): exit 6, nothing
	// patched, nothing on stdout.
	res = h.Run("chaos", "upgrade", "rayservice/up", "--image", "rayproject/ray:2.46.0-py311")
	if res.Code != 6 || !strings.Contains(res.Stderr, "refusing to") || !strings.Contains(res.Stderr, "without --yes") || res.Stdout != "" {
		t.Errorf("no --yes, no terminal: want exit 6 and nothing done: %s", res)
	}
	if got := generation(); got != gen {
		t.Fatalf("--dry-run, a refused patch or an unconfirmed upgrade changed the RayService: generation %d -> %d", gen, got)
	}
	if rs, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "up", metav1.GetOptions{}); err != nil || rs.Labels["team"] != "" {
		t.Errorf("the refused patch was applied: %v %v", err, rs.Labels)
	}

	// Another writer changes the spec during the warm-up: the patch is not applied to a RayService
	// the command never read (exit 3). The change here is to a field KubeRay v1.5.0 no longer reads
	// (kuberay #1685), so the operator starts no upgrade of its own.
	changedAt := time.Now()
	done := h.start("chaos", "upgrade", "rayservice/up", "--patch", `{"spec":{"rayClusterConfig":{"rayVersion":"2.46.1"}}}`,
		"--path", "/fruit", "--rate", "20/s", "--warmup", "10s", "--timeout", "1m", "--yes")
	h.WaitFor("the warm-up's first request", 30*time.Second, func() (bool, error) {
		_, served := ray.Tally(changedAt, false)
		return len(served) > 0, nil
	})
	if _, err := h.Ray.RayV1().RayServices(h.NS).Patch(h.Ctx, "up", types.MergePatchType,
		[]byte(`{"spec":{"serviceUnhealthySecondThreshold":901}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	res = <-done
	if want := fmt.Sprintf("RayService %s/up changed since it was read (generation %d, now %d): nothing was patched", h.NS, gen, gen+1); res.Code != 3 || !strings.Contains(res.Stderr, want) {
		t.Errorf("spec changed during the warm-up: want exit 3 and %q: %s", want, res)
	}
	if rs, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "up", metav1.GetOptions{}); err != nil || rs.Generation != gen+1 || rs.Spec.RayClusterSpec.RayVersion == "2.46.1" {
		t.Errorf("spec changed during the warm-up: want only the other writer's change (generation %d): %v %+v", gen+1, err, rs)
	}

	// A healthy upgrade: every step on the timeline, every request counted as a stand-in served it.
	// It runs as a user holding only docs/rbac.md's chaos-upgrade role, as written there, and with
	// a --patch, which is applied pinned to the RayService as read after the warm-up.
	applier, err := sandbox.NewApplier(h.SB.Admin)
	if err != nil {
		t.Fatal(err)
	}
	applyDocRoles(h, applier)
	docUser := "up-docrole-" + h.NS
	if _, err := h.Kube.RbacV1().RoleBindings(h.NS).Create(h.Ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "up-docrole", Namespace: h.NS},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "kubectl-ray:chaos-upgrade"},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: docUser}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	res = h.Run("--as", docUser, "chaos", "upgrade", "rayservice/up", "--patch", `{"spec":{"rayClusterConfig":{"rayVersion":"2.46.1"}}}`, "--path", "/fruit",
		"--rate", "20/s", "--warmup", "2s", "--timeout", "2m", "-o", "json", "--yes")
	r := parseUpgradeReport(t, res)
	saveUpgrade("upgrade-healthy.json", res.Stdout)
	_, served := ray.Tally(before, false)
	u := r.Upgrade
	if res.Code != 0 || !r.Verdict.Passed || !u.Switched || u.OldCluster != old || u.NewCluster == "" || u.NewCluster == old {
		t.Errorf("healthy upgrade: exit %d verdict %v upgrade %+v\n%s", res.Code, r.Verdict.Passed, u, res.Stderr)
	}
	for name, v := range map[string]*float64{"pending cluster created": u.PendingClusterCreatedMs, "its head Ready": u.NewHeadReadyMs,
		"its apps RUNNING": u.ServeAppsReadyMs, "active switched": u.ActiveSwitchedMs, "old cluster deleted": u.OldClusterDeletedMs} {
		if v == nil {
			t.Errorf("healthy upgrade: %s not on the timeline: %+v", name, u)
		}
	}
	if fmt.Sprint(httpCodes(r.Totals.ByStatus)) != fmt.Sprint(served) || r.Totals.Requests == 0 {
		t.Errorf("report counts %v; the stand-ins served %v (want equal)", r.Totals.ByStatus, served)
	}
	// Zero downtime: the old pods serve until the new ones are behind the Service, and the probe
	// moves over without a gap of its own (make-before-break port-forwards).
	if r.Totals.Errors != 0 || r.Totals.Aborted != 0 {
		t.Errorf("healthy upgrade: %d errors, %d aborted; want none", r.Totals.Errors, r.Totals.Aborted)
	}
	if _, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, old, metav1.GetOptions{}); err == nil {
		t.Errorf("the old cluster %s still exists", old)
	}
	if rs, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "up", metav1.GetOptions{}); err != nil || rs.Spec.RayClusterSpec.RayVersion != "2.46.1" {
		t.Errorf("healthy upgrade: the --patch was not applied: %v", err)
	}

	// The same in text, for the docs: the steps, the per-endpoint table and the verdict.
	res = h.Run("chaos", "upgrade", "rayservice/up", "--image", "rayproject/ray:2.46.0-py310", "--path", "/fruit",
		"--rate", "20/s", "--warmup", "2s", "--timeout", "2m", "--min-availability", "95", "--yes")
	saveUpgrade("upgrade-healthy.txt", res.Stdout)
	if res.Code != 0 || !regexp.MustCompile(`active cluster switched\s+\+\d`).MatchString(res.Stdout) || !strings.Contains(res.Stdout, "Verdict: PASS") {
		t.Errorf("healthy upgrade, text: %s", res)
	}
	rs, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "up", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.NewCluster = rs.Status.ActiveServiceStatus.RayClusterName

	// An upgrade whose new cluster never runs its apps: not passed (exit 1), and the report says
	// what was seen last. Traffic stays on the active cluster; the upgrade is not reverted.
	mu.Lock()
	blockNew, allowed[u.NewCluster] = true, true
	mu.Unlock()
	res = h.Run("chaos", "upgrade", "rayservice/up", "--image", "rayproject/ray:2.46.0-py312", "--path", "/fruit",
		"--rate", "20/s", "--warmup", "2s", "--timeout", "30s", "--yes")
	saveUpgrade("upgrade-never-ready.txt", res.Stdout+res.Stderr)
	for _, want := range []string{`FAIL switch: the active cluster never switched: pending cluster \S+, its head Ready, apps fruit_app DEPLOYING, math_app DEPLOYING; traffic still on ` + u.NewCluster,
		`active cluster switched\s+not seen`, `its head Ready\s+\+\d`, "kubectl ray never reverts an upgrade"} {
		if !regexp.MustCompile(want).MatchString(res.Stdout) {
			t.Errorf("never-ready upgrade: want %q in the report:\n%s", want, res)
		}
	}
	if res.Code != 1 || !strings.Contains(res.Stderr, "the upgrade did not complete within --timeout 30s") {
		t.Errorf("never-ready upgrade: want exit 1 and the note: %s", res)
	}
	rs, err = h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "up", metav1.GetOptions{})
	if err != nil || rs.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image != "rayproject/ray:2.46.0-py312" ||
		rs.Status.ActiveServiceStatus.RayClusterName != u.NewCluster {
		t.Errorf("after the stuck upgrade: want the patched image kept and traffic on %s: %v %+v", u.NewCluster, err, rs.Status.ActiveServiceStatus.RayClusterName)
	}
	if err := ray.Err(); err != nil {
		t.Errorf("Ray stand-ins: %v", err)
	}
}

func parseUpgradeReport(t *testing.T, res Result) *upgradeReport {
	t.Helper()
	r := &upgradeReport{}
	if err := json.Unmarshal([]byte(res.Stdout), r); err != nil || r.Kind != "UpgradeReport" {
		t.Fatalf("not an UpgradeReport (%v): %s", err, res)
	}
	return r
}

// saveUpgrade keeps an output in $UPGRADE_SAVE_DIR, for docs/chaos-upgrade.md's sandbox output.
func saveUpgrade(name, out string) {
	if dir := os.Getenv("UPGRADE_SAVE_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, name), []byte(out), 0o644)
	}
}
