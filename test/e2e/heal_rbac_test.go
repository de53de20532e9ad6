package e2e

import (
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

const healSA = "system:serviceaccount:kubectl-ray:kubectl-ray-heal"

// watchdogRBAC is docs/deploy/watchdog.yaml without its Deployment: the Namespace, the
// ServiceAccount, the ClusterRole, the Lease Role and their bindings, exactly as documented.
func watchdogRBAC(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("../../docs/deploy/watchdog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	kinds := map[string]bool{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		m := regexp.MustCompile(`(?m)^kind: (\w+)$`).FindStringSubmatch(doc)
		if m == nil {
			t.Fatalf("a document of watchdog.yaml without a kind:\n%s", doc)
		}
		kinds[m[1]] = true
		if m[1] != "Deployment" {
			keep = append(keep, doc)
		}
	}
	for _, k := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment"} {
		if !kinds[k] {
			t.Fatalf("watchdog.yaml has no %s", k)
		}
	}
	return []byte(strings.Join(keep, "\n---\n"))
}

// The RBAC of docs/deploy/watchdog.yaml, applied to the sandbox and used by impersonating its
// ServiceAccount (--as): a one-shot heal and a leader-elected watchdog both work; with the
// ClusterRoleBinding gone, heal stops at its first read with one line naming the verb and the
// resource (exit 4) and deletes nothing. The manifest's objects are cluster-wide names no other
// test uses. Evictions are the kubelet's part, played by play.KubeletEvict.
func TestHealRBACFromManifest(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	ap, err := sandbox.NewApplier(h.SB.Admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ap.Create(h.Ctx, watchdogRBAC(t), ""); err != nil {
		t.Fatal(err)
	}
	h.CreateRayCluster("rbac", nil)
	h.WaitClusterRunning("rbac", 90*time.Second)

	old := h.healEvict("rbac")
	res := h.Run("heal", "rbac", "--yes", "--timeout", "90s", "--as", healSA)
	t.Logf("heal --as %s:\n%s", healSA, res)
	if res.Code != 0 || res.Stderr != "" {
		t.Fatalf("heal as the ServiceAccount: %s", res)
	}
	ns := regexp.QuoteMeta(h.NS)
	matchLines(t, "heal stdout", res.Stdout,
		`Plan: 1 delete`,
		`  delete pod `+ns+`/`+old.Name+` of RayCluster rbac \(head-evicted\)`,
		`    `+regexp.QuoteMeta(evictedSummary),
		`deleted pod `+ns+`/`+old.Name+` \(rule head-evicted\)`,
		`  recorded Event RayHeadHealed on RayCluster `+ns+`/rbac and on the pod`,
		`RayCluster `+ns+`/rbac: new head \S+ created `+durRE+` after the delete, Running and Ready after `+durRE,
	)
	second := h.waitNewHead("rbac", old.Name, 10*time.Second)

	// The watchdog as the Deployment runs it: leader election with the Lease in its namespace.
	wd := h.startWatchdog("sa", h.SB.Kubeconfig(), "heal", "--watch", "--yes", "--min-age", "0s", "-n", h.NS,
		"--leader-elect", "--lease-namespace", "kubectl-ray", "--as", healSA, "--workers", "4", "-o", "json")
	wd.WaitRecord("leadership", 60*time.Second, "msg", "became leader; acting")
	wd.WaitRecord("the watching line", 60*time.Second, "msg", "watching")
	evicted := h.healEvict("rbac")
	rec := wd.WaitRecord("the delete of "+second.Name, 60*time.Second, "result", "deleted", "pod", second.Name)
	wantDeletedRecord(t, rec, h.NS, "rbac", evicted)
	third := h.waitNewHead("rbac", second.Name, 60*time.Second)
	if code := wd.Stop(syscall.SIGTERM); code != 0 || len(wd.Matching("level", "error")) != 0 {
		t.Errorf("watchdog as the ServiceAccount: exit %d, lines:\n%s\nstderr: %s", code, strings.Join(wd.Lines(), "\n"), wd.Stderr())
	}
	if n := len(h.healEvents()); n != 4 {
		t.Errorf("want 4 RayHeadHealed Events (2 per heal), got %d", n)
	}

	// Without the ClusterRoleBinding.
	if err := h.Kube.RbacV1().ClusterRoleBindings().Delete(h.Ctx, "kubectl-ray-heal", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the authorizer to forget the binding", 30*time.Second, func() (bool, error) {
		sar, err := h.Kube.AuthorizationV1().SubjectAccessReviews().Create(h.Ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: healSA, ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: h.NS, Verb: "list", Group: "ray.io", Resource: "rayclusters"},
		}}, metav1.CreateOptions{})
		return err == nil && !sar.Status.Allowed, err
	})
	stuck := h.healEvict("rbac")
	if stuck.Name != third.Name {
		t.Fatalf("evicted %s, want %s", stuck.Name, third.Name)
	}
	res = h.Run("heal", "rbac", "--yes", "--as", healSA)
	t.Logf("heal --as %s without the binding:\n%s", healSA, res)
	wantHealError(t, res, 4, `error: forbidden: you cannot list rayclusters.ray.io in namespace "`+h.NS+`"; ask for RBAC verb "list" on "rayclusters.ray.io" (check with: kubectl auth can-i list rayclusters.ray.io -n `+h.NS+`)`)
	p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, stuck.Name, metav1.GetOptions{})
	if err != nil || p.UID != stuck.UID || p.DeletionTimestamp != nil {
		t.Errorf("the evicted head %s was touched: %v", stuck.Name, err)
	}
	wd = h.startWatchdog("sa-unbound", h.SB.Kubeconfig(), "heal", "--watch", "--yes", "--min-age", "0s", "-n", h.NS, "--as", healSA, "-o", "json")
	select {
	case <-wd.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the watchdog without the binding is still running: %v", wd.Lines())
	}
	if wd.code != 4 || !strings.Contains(wd.Stderr(), `error: forbidden: you cannot list `) {
		t.Errorf("watchdog without the binding: exit %d, stderr %q, stdout %v", wd.code, wd.Stderr(), wd.Lines())
	}
}

// wantHealError fails unless res exited with code, printed nothing on stdout and exactly line on
// stderr.
func wantHealError(t *testing.T, res Result, code int, line string) {
	t.Helper()
	if res.Code != code || res.Stdout != "" || res.Stderr != line+"\n" {
		t.Errorf("want exit %d, no stdout and stderr\n  %s\ngot %s", code, line, res)
	}
}

// Bad input that only the API server can reveal: a lease namespace that does not exist, and
// --force when no head is stuck. One line each, exit 2, nothing changed.
func TestHealBadInputOnSandbox(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("bad", nil)
	head := h.WaitClusterRunning("bad", 90*time.Second)

	// A watchdog has nobody to ask: without --yes (or --dry-run) it refuses before it starts.
	res := h.Run("heal", "--watch")
	wantHealError(t, res, 6, "error: --watch deletes heads without asking: pass --yes, or --dry-run to only log what it would do")

	res = h.Run("heal", "--watch", "--yes", "--leader-elect", "--lease-namespace", "no-such-namespace-"+h.NS)
	wantHealError(t, res, 2, `error: lease namespace "no-such-namespace-`+h.NS+`" does not exist; pass --lease-namespace with an existing namespace (the one the watchdog runs in)`)

	res = h.Run("heal", "bad", "--yes", "--no-evidence", "--evidence-dir", t.TempDir())
	wantHealError(t, res, 2, "error: --no-evidence keeps nothing, so --evidence-dir has nowhere to apply: pass one or the other")

	res = h.Run("heal", "bad", "--yes", "--evidence-dir", "")
	wantHealError(t, res, 2, "error: --evidence-dir is empty: give a directory, e.g. --evidence-dir ./kubectl-ray-evidence, or pass --no-evidence")

	res = h.Run("heal", "--force", "--yes")
	wantHealError(t, res, 2, "error: --force only force-deletes heads stuck Terminating on a down node, and doctor finds none in namespace "+h.NS+"; run without --force")
	res = h.Run("heal", "bad", "--force", "--yes")
	wantHealError(t, res, 2, "error: --force only force-deletes heads stuck Terminating on a down node, and doctor finds none for RayCluster "+h.NS+"/bad; run without --force")
	h.wantUntouched(head)
}
