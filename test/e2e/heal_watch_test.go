package e2e

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// wantDeletedRecord fails unless rec is the watchdog's line for deleting the evicted head old of
// cluster.
func wantDeletedRecord(t *testing.T, rec map[string]string, ns, cluster string, old corev1.Pod) {
	t.Helper()
	want := map[string]string{
		"level": "info", "msg": "deleted pod " + ns + "/" + old.Name + " (rule head-evicted)",
		"action": "delete", "result": "deleted", "rule": "head-evicted", "raycluster": ns + "/" + cluster,
		"pod": old.Name, "uid": string(old.UID), "resourceVersion": old.ResourceVersion, "node": old.Spec.NodeName,
	}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("watchdog line: %s=%q, want %q (line %v)", k, rec[k], v, rec)
		}
	}
	if _, err := time.Parse(time.RFC3339Nano, rec["time"]); err != nil {
		t.Errorf("watchdog line: time %q: %v", rec["time"], err)
	}
}

// wantEvidenceRecords fails unless the watchdog logged the evidence of old before deleting it
// (docs/heal.md): the pod's status as the kubelet left it and the kubelet's Evicted Event (both
// played), and, since no kubelet serves a kwok pod's log, the log it could not read; the delete's
// line says where the evidence went.
func wantEvidenceRecords(t *testing.T, wd *watchdog, deleted map[string]string, ns string, old corev1.Pod) {
	t.Helper()
	uid := string(old.UID)
	if want := "the watchdog's log (evidence=" + uid + ")"; deleted["evidence"] != want {
		t.Errorf("delete line: evidence=%q, want %q", deleted["evidence"], want)
	}
	if p := deleted["evidenceProblem"]; !strings.Contains(p, "kept without") || !strings.Contains(p, "kubelet") {
		t.Errorf("delete line: evidenceProblem=%q, want the log the kwok node could not serve", p)
	}
	kept := wd.WaitRecord("the evidence of "+old.Name, 5*time.Second, "msg", "evidence kept before delete", "evidence", uid)
	if kept["pod"] != ns+"/"+old.Name || kept["rule"] != "head-evicted" {
		t.Errorf("evidence line: %v", kept)
	}
	if st := wd.WaitRecord("its status", 5*time.Second, "msg", "evidence pod status", "evidence", uid); !strings.Contains(st["status"], `"reason":"Evicted"`) {
		t.Errorf("evidence status line: %v", st)
	}
	wd.WaitRecord("its Evicted Event", 5*time.Second, "msg", "evidence event", "evidence", uid, "reason", "Evicted")
	wd.WaitRecord("its unread log", 5*time.Second, "msg", "evidence not kept", "evidence", uid, "what", "log of container ray-head")
}

// heal --watch heals an evicted head with no other command, survives a 10 s API server outage
// (in a sandbox of the test's own: the shared one is never stopped) and heals the next eviction.
// Evictions are the kubelet's part, played by play.KubeletEvict; the real KubeRay v1.1.1 creates
// the new heads. Its /metrics are scraped before and after each heal and read with Prometheus'
// exposition parser; /readyz turns 503 during the outage and 200 after it, while /healthz stays
// 200 (an outage is no reason to restart the process).
func TestHealWatchSurvivesAPIServerRestart(t *testing.T) {
	t.Parallel()
	sb := ownSandbox(t, "watch", sandbox.OperatorV111)
	h := newHOn(t, sb)
	h.CreateRayCluster("wc", nil)
	h.WaitClusterRunning("wc", 90*time.Second)
	wd := h.startWatchdog("heal", sb.Kubeconfig(), "heal", "--watch", "--yes", "--min-age", "0s", "-n", h.NS, "-o", "json",
		"--metrics-bind-address", "127.0.0.1:0")
	addr := wd.metricsAddr(60 * time.Second)
	start := wd.WaitRecord("the watching line", 60*time.Second, "msg", "watching")
	if start["scope"] != h.NS || start["rayclusters"] != "1" || start["minAge"] != "0s" || start["dryRun"] != "false" {
		t.Errorf("watching line: %v", start)
	}
	waitProbe(t, addr, "/readyz", 200, 30*time.Second)
	before := scrape(t, addr)
	wantSample(t, before, 0, "kubectl_ray_heal_heals_total", "rule", "head-evicted", "result", "deleted")
	wantSample(t, before, 1, "kubectl_ray_heal_leader")
	wantSample(t, before, 1, "kubectl_ray_heal_ready")
	// The watchdog's heap is nearly all informer cache, so it sets the GC target to 35 unless the
	// environment sets GOGC or GOMEMLIMIT; the Go collector reports the target in effect.
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		wantSample(t, before, 35, "go_gc_gogc_percent")
	}

	first := h.healEvict("wc")
	rec := wd.WaitRecord("the delete of "+first.Name, 60*time.Second, "result", "deleted", "pod", first.Name)
	wantDeletedRecord(t, rec, h.NS, "wc", first)
	wantEvidenceRecords(t, wd, rec, h.NS, first)
	second := h.waitNewHead("wc", first.Name, 60*time.Second)
	// The watchdog sees the new head Ready through its informer a moment after the test does.
	after := waitSample(t, addr, 15*time.Second, 1, "kubectl_ray_heal_delete_to_ready_seconds", "rule", "head-evicted")
	wantSample(t, after, 1, "kubectl_ray_heal_heals_total", "rule", "head-evicted", "result", "deleted")
	wantSample(t, after, 0, "kubectl_ray_heal_heads_needing_heal", "rule", "head-evicted")
	wantSample(t, after, 1, "kubectl_ray_heal_seen_to_delete_seconds", "rule", "head-evicted")
	wantSample(t, after, 1, "kubectl_ray_heal_delete_to_ready_seconds", "rule", "head-evicted")
	wantSample(t, after, 0, "kubectl_ray_heal_api_errors_total", "operation", "delete")
	if _, ok := sample(after, "process_resident_memory_bytes"); !ok {
		t.Error("no process collector metrics")
	}

	if err := sb.Stop("kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	body := waitProbe(t, addr, "/readyz", 503, 10*time.Second)
	if !strings.Contains(body, "the API server does not answer") {
		t.Errorf("/readyz during the outage: %q", body)
	}
	if code, body := probeStatus(addr, "/healthz"); code != 200 {
		t.Errorf("/healthz during the outage: %d %q, want 200", code, body)
	}
	time.Sleep(5 * time.Second)
	if err := sb.Start(h.Ctx, "kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	if !wd.Running() {
		t.Fatalf("the watchdog exited during the outage (code %d): %s", wd.code, wd.Stderr())
	}
	waitProbe(t, addr, "/readyz", 200, 30*time.Second)

	// After the outage client-go's reflectors reconnect with their backoff (up to 30 s).
	evicted := h.healEvict("wc")
	if evicted.Name != second.Name {
		t.Fatalf("evicted %s, want the new head %s", evicted.Name, second.Name)
	}
	rec = wd.WaitRecord("the delete of "+second.Name+" after the outage", 90*time.Second, "result", "deleted", "pod", second.Name)
	wantDeletedRecord(t, rec, h.NS, "wc", evicted)
	h.waitNewHead("wc", second.Name, 60*time.Second)

	final := scrape(t, addr)
	wantSample(t, final, 2, "kubectl_ray_heal_heals_total", "rule", "head-evicted", "result", "deleted")
	if v, _ := sample(final, "kubectl_ray_heal_api_errors_total", "operation", "ping"); v < 1 {
		t.Errorf("the outage's failed API checks were not counted: %v", v)
	}
	if n := len(wd.Matching("result", "deleted")); n != 2 || len(wd.Matching("level", "error")) != 0 {
		t.Errorf("want exactly 2 deletes and no error line, got:\n%v", wd.Lines())
	}
	if n := len(h.healEvents()); n != 4 {
		t.Errorf("want 4 RayHeadHealed Events (2 per heal), got %d", n)
	}
	if code := wd.Stop(syscall.SIGTERM); code != 0 {
		t.Errorf("watchdog exit code on SIGTERM: %d; stderr: %s", code, wd.Stderr())
	}
	// Everything, client-go's own messages included, is one JSON object per line on stdout.
	if wd.Stderr() != "" {
		t.Errorf("the watchdog wrote to stderr: %s", wd.Stderr())
	}
	t.Logf("watchdog output:\n%s", strings.Join(wd.Lines(), "\n"))
}

// Two watchdogs with --leader-elect: exactly one leads and deletes; when the leader dies
// (SIGKILL: no chance to release the Lease) the other takes over once the Lease expires and heals
// the next eviction. Evictions are the kubelet's part, played by play.KubeletEvict.
func TestHealWatchLeaderElection(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("le", nil)
	h.WaitClusterRunning("le", 90*time.Second)
	args := []string{"heal", "--watch", "--yes", "--min-age", "0s", "-n", h.NS, "--leader-elect", "--lease-namespace", h.NS, "-o", "json"}
	a := h.startWatchdog("a", h.SB.Kubeconfig(), args...)
	b := h.startWatchdog("b", h.SB.Kubeconfig(), args...)

	var leader, follower *watchdog
	h.WaitFor("one leader and one follower", 60*time.Second, func() (bool, error) {
		la, lb := len(a.Matching("msg", "became leader; acting")), len(b.Matching("msg", "became leader; acting"))
		fa, fb := len(a.Matching("msg", "following the leader; not acting")), len(b.Matching("msg", "following the leader; not acting"))
		switch {
		case la == 1 && lb == 0 && fb > 0:
			leader, follower = a, b
		case lb == 1 && la == 0 && fa > 0:
			leader, follower = b, a
		}
		return leader != nil, nil
	})
	leaderID := leader.Matching("msg", "became leader; acting")[0]["identity"]
	if f := follower.Matching("msg", "following the leader; not acting")[0]; f["leader"] != leaderID {
		t.Errorf("the follower follows %q, the leader is %q", f["leader"], leaderID)
	}
	lease, err := h.Kube.CoordinationV1().Leases(h.NS).Get(h.Ctx, "kubectl-ray-heal", metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != leaderID {
		t.Fatalf("Lease kubectl-ray-heal: %+v, err %v; want holder %s", lease, err, leaderID)
	}
	leader.WaitRecord("the leader's watching line", 60*time.Second, "msg", "watching")

	first := h.healEvict("le")
	rec := leader.WaitRecord("the leader's delete of "+first.Name, 60*time.Second, "result", "deleted", "pod", first.Name)
	wantDeletedRecord(t, rec, h.NS, "le", first)
	second := h.waitNewHead("le", first.Name, 60*time.Second)
	if got := follower.Matching("action", "delete"); len(got) != 0 {
		t.Errorf("the follower acted: %v", got)
	}
	if n := len(h.healEvents()); n != 2 {
		t.Errorf("want 2 RayHeadHealed Events after one heal, got %d", n)
	}

	leader.Stop(syscall.SIGKILL)
	follower.WaitRecord("the follower to take over", 60*time.Second, "msg", "became leader; acting")
	follower.WaitRecord("the new leader's watching line", 60*time.Second, "msg", "watching")
	evicted := h.healEvict("le")
	rec = follower.WaitRecord("the new leader's delete of "+second.Name, 60*time.Second, "result", "deleted", "pod", second.Name)
	wantDeletedRecord(t, rec, h.NS, "le", evicted)
	h.waitNewHead("le", second.Name, 60*time.Second)

	if got := append(leader.Matching("action", "delete"), follower.Matching("action", "delete")...); len(got) != 2 {
		t.Errorf("want exactly 2 deletes across both watchdogs, got %v", got)
	}
	if n := len(h.healEvents()); n != 4 {
		t.Errorf("want 4 RayHeadHealed Events after two heals, got %d", n)
	}
	for _, w := range []*watchdog{leader, follower} {
		if w.Stderr() != "" {
			t.Errorf("watchdog %s wrote to stderr: %s", w.name, w.Stderr())
		}
	}
	t.Logf("first leader:\n%s\nsecond leader:\n%s", strings.Join(leader.Lines(), "\n"), strings.Join(follower.Lines(), "\n"))
}
