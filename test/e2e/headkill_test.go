package e2e

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// TestHeadKillServiceReport: a RayService-shaped setup (real operator, serve Service, one
// stand-in Serve proxy per pod reached through kwok PortForwards and the command's own
// port-forwards). The stand-ins play Ray Serve (200, then 502 for 2 s after the head is killed);
// the scene's pod watch plays the RayService controller (labels ready pods ray.io/serve=true).
func TestHeadKillServiceReport(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("hk", onNode(headKillNode(h, "hk")))
	head := h.WaitClusterRunning("hk", 120*time.Second)
	sc := newServeScene(h, "hk", 2*time.Second)
	sc.waitServing(2)
	svcArgs := []string{"chaos", "head-kill", "hk", "--service", sc.service, "--port", "8000"}

	// --dry-run: prints the plan, kills nothing, sends nothing.
	before := time.Now()
	res := h.Run(append(svcArgs, "--dry-run", "--rate", "50/s", "--warmup", "2s", "--after", "8s")...)
	if res.Code != 0 {
		t.Fatalf("dry run: %s", res)
	}
	save("dry-run.txt", res.Stdout)
	for _, want := range []string{
		"Would kill:   pod " + head.Name + " (head of RayCluster hk) by delete",
		"Would probe:  GET service/hk-serve-svc:8000/ at 50/s through a port-forward to each of 2 ready endpoints",
		"The API server accepted a dry run of the kill of pod " + h.NS + "/" + head.Name,
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, res.Stdout)
		}
	}
	// -o json: the same plan as one document (as heal --dry-run -o json).
	res = h.Run(append(svcArgs, "--dry-run", "-o", "json")...)
	var plan struct {
		Kind      string
		Head      struct{ Name string }
		Endpoints []string
	}
	if err := json.Unmarshal([]byte(res.Stdout), &plan); res.Code != 0 || err != nil || plan.Kind != "HeadKillPlan" ||
		plan.Head.Name != head.Name || len(plan.Endpoints) != 2 {
		t.Errorf("dry run -o json: %v, plan %+v, %s", err, plan, res)
	}
	headUnchanged(h, head)
	if _, total, _ := sc.tally(before); len(total) != 0 {
		t.Fatalf("dry run sent traffic: the stand-ins answered %v", total)
	}

	// --mode evict against a PodDisruptionBudget that allows no disruption: 429, nothing killed.
	// minAvailable 1 (not maxUnavailable 0): the head's owner, a RayCluster, has no scale
	// subresource, which maxUnavailable needs.
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "hk-head", Namespace: h.NS},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ray.io/cluster": "hk", "ray.io/node-type": "head"}}}}
	if _, err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Create(h.Ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the disruption controller to count the PDB's pods", 30*time.Second, func() (bool, error) {
		p, err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Get(h.Ctx, "hk-head", metav1.GetOptions{})
		return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy == 1 && p.Status.DisruptionsAllowed == 0, err
	})
	before = time.Now()
	res = h.Run(append(svcArgs, "--mode", "evict", "--warmup", "1s", "--after", "1s", "--yes")...)
	if res.Code != 3 || !strings.Contains(res.Stderr, "(429)") || !strings.Contains(res.Stderr, "disruption budget") ||
		!strings.Contains(res.Stderr, "nothing was killed") {
		t.Fatalf("evict against a blocking PDB: want exit 3 naming the 429, got %s", res)
	}
	save("evict-pdb.txt", res.Stderr)
	headUnchanged(h, head)
	if _, total, _ := sc.tally(before); len(total) != 0 {
		t.Fatalf("a refused eviction sent traffic: %v", total)
	}
	if err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Delete(h.Ctx, "hk-head", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// The kill, with an SLO the 502s break: exit 1, and the report matches the stand-ins exactly.
	html := filepath.Join(t.TempDir(), "head-kill.html")
	before = time.Now()
	res = h.Run(append(svcArgs, "--rate", "50/s", "--warmup", "2s", "--after", "8s", "--max-errors", "0",
		"-o", "json", "--report-html", html, "--yes")...)
	if res.Code != 1 {
		t.Fatalf("SLO broken: want exit 1, got %s", res)
	}
	r := parseHeadKillReport(t, res)
	checkAgainstStandIns(t, sc, r, before, head.Name)
	if page, err := os.ReadFile(html); err != nil || !strings.Contains(string(page), "<svg") {
		t.Errorf("--report-html: %v, has svg %v", err, strings.Contains(string(page), "<svg"))
	}

	// Again on the new head, with an SLO that holds: exit 0. The text report is what
	// docs/chaos-head-kill.md shows.
	newHead := h.WaitClusterRunning("hk", 60*time.Second)
	sc.waitServing(2)
	before = time.Now()
	res = h.Run(append(svcArgs, "--rate", "50/s", "--warmup", "2s", "--until-recovered", "--timeout", "60s",
		"--min-availability", "50", "--yes")...)
	t.Logf("text report:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	save("until-recovered.txt", res.Stdout)
	if res.Code != 0 || !strings.Contains(res.Stdout, "Verdict: PASS") || !strings.Contains(res.Stdout, "Stopped early once recovered") {
		t.Fatalf("SLO held: want exit 0 and PASS after recovery, got %s", res)
	}
	_, total, _ := sc.tally(before)
	sum := 0
	for _, n := range total {
		sum += n
	}
	if got := textCount(t, res.Stdout, "requests"); got != sum {
		t.Errorf("text report: %d requests, the stand-ins answered %d", got, sum)
	}
	if got := textCount(t, res.Stdout, "502"); got != total["502"] || got == 0 {
		t.Errorf("text report: %d 502s, the stand-ins served %d (want > 0)", got, total["502"])
	}
	if !strings.Contains(res.Stdout, "KillRequested "+newHead.Name+" (delete)") {
		t.Errorf("text report does not show the kill of %s", newHead.Name)
	}

	// Ctrl-C after the kill: the report of what was seen, exit 130.
	killed := h.WaitClusterRunning("hk", 60*time.Second)
	sc.waitServing(2)
	before = time.Now()
	cmd := exec.Command(env.bin, append(svcArgs, "--kubeconfig", h.SB.Kubeconfig(), "-n", h.NS, "--rate", "50/s",
		"--warmup", "2s", "--after", "60s", "--mode", "force", "-o", "json", "--yes")...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupted once the kill is done (its head gone), whatever the machine's load made of the
	// command's start and warm-up.
	h.WaitFor("the head-kill to kill "+killed.Name, 60*time.Second, func() (bool, error) { return h.podGone(killed.Name, string(killed.UID)), nil })
	time.Sleep(time.Second)
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	res = Result{Stdout: stdout.String(), Stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(res.Stderr, "interrupted: the report above covers what was seen") {
		t.Fatalf("Ctrl-C: want exit 130 after the report, got %v: %s", err, res)
	}
	r = parseHeadKillReport(t, res)
	_, total, _ = sc.tally(before)
	sum = 0
	for _, n := range total {
		sum += n
	}
	if !r.Probe.Interrupted || r.Probe.KillAtMs == nil || r.Totals.Requests > sum || sum > r.Totals.Requests+r.Totals.Aborted ||
		r.Totals.Requests < 100 { // at least the warm-up: 2 s at 50/s
		t.Errorf("Ctrl-C report: interrupted %v kill %v requests %d aborted %d; the stand-ins answered %d",
			r.Probe.Interrupted, r.Probe.KillAtMs, r.Totals.Requests, r.Totals.Aborted, sum)
	}
}

// save keeps an output in $HEADKILL_SAVE_DIR, for docs/chaos-head-kill.md's sandbox output.
func save(name, out string) {
	if dir := os.Getenv("HEADKILL_SAVE_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, name), []byte(out), 0o644)
	}
}

// checkAgainstStandIns compares a JSON report with what the stand-ins served and what the
// scene's watch saw.
// watchLag bounds how far apart two watches may report the same pod change. 500ms held in CI
// until a cold run with other tests loading both cores saw one watch deliver a deletionTimestamp
// 1.2 s after the other: the check is that the report's times are the real events', not a speed.
const watchLag = 2 * time.Second

func checkAgainstStandIns(t *testing.T, sc *serveScene, r *headKillReport, since time.Time, oldHead string) {
	t.Helper()
	perPod, total, all := sc.tally(since)
	sum := 0
	for _, n := range total {
		sum += n
	}
	if r.Totals.Requests != sum || r.Totals.Status502 != total["502"] || r.Totals.ByStatus["502"] != total["502"] ||
		r.Totals.Status2xx != total["200"] || total["502"] == 0 {
		t.Errorf("report totals requests %d 2xx %d 502 %d byStatus %v; the stand-ins answered %d: %v (want some 502s)",
			r.Totals.Requests, r.Totals.Status2xx, r.Totals.Status502, r.Totals.ByStatus, sum, total)
	}
	if r.Totals.ConnectionErrors != 0 || r.Totals.Timeouts != 0 || r.Totals.Aborted != 0 {
		t.Errorf("requests lost on the way: connection errors %d timeouts %d aborted %d (%v)", r.Totals.ConnectionErrors,
			r.Totals.Timeouts, r.Totals.Aborted, r.Totals.ByClass)
	}
	// Every error is attributed to the pod whose stand-in served it.
	rows := map[string]map[string]int{}
	for _, e := range r.Endpoints {
		rows[e.Name] = e.ByStatus
	}
	if len(rows) != len(perPod) {
		t.Errorf("report endpoints %v, stand-ins that answered %v", rows, perPod)
	}
	for pod, want := range perPod {
		got := rows[pod]
		for code, n := range want {
			if got[code] != n {
				t.Errorf("endpoint %s status %s: report %d, stand-in %d", pod, code, got[code], n)
			}
		}
		if len(got) != len(want) {
			t.Errorf("endpoint %s: report %v, stand-in %v", pod, got, want)
		}
	}

	// The error window against the stand-ins' clocks.
	var first, last time.Time
	for _, a := range all {
		if a.code == 502 {
			if first.IsZero() {
				first = a.at
			}
			last = a.at
		}
	}
	if r.ErrorWindow == nil || r.Probe.KillAtMs == nil {
		t.Fatalf("no error window or kill in the report")
	}
	within(t, "first error", r.at(r.ErrorWindow.FirstMs), first, 100*time.Millisecond)
	within(t, "last error", r.at(r.ErrorWindow.LastMs), last, 100*time.Millisecond)

	// Recovery against the scene's watch, and the API's own (second-resolution) timestamps.
	rc := r.Recovery
	if rc.OldHead != oldHead || rc.NewHead == "" || rc.NewHead == oldHead {
		t.Fatalf("recovery old %q new %q, want old %s and a new head", rc.OldHead, rc.NewHead, oldHead)
	}
	// Pod times are what two watches saw (the report's and the scene's): under a loaded machine
	// either may be delivered late, so they are held to watchLag, not 100ms.
	within(t, "kill (deletionTimestamp seen)", r.at(0), sc.seen(sc.killed, oldHead).at, watchLag)
	sc.mu.Lock()
	gone := sc.gone[oldHead]
	sc.mu.Unlock()
	if rc.OldHeadGoneMs == nil || gone.IsZero() {
		t.Errorf("old head gone: report %v, scene %v", rc.OldHeadGoneMs, gone)
	} else {
		within(t, "old head gone", r.at(*rc.OldHeadGoneMs), gone, watchLag)
	}
	for _, step := range []struct {
		name string
		ms   *float64
		seen map[string]apiSeen
	}{
		{"new head created", rc.NewHeadCreatedMs, sc.created},
		{"new head Running", rc.NewHeadRunningMs, sc.running},
		{"new head Ready", rc.NewHeadReadyMs, sc.ready},
	} {
		s := sc.seen(step.seen, rc.NewHead)
		if step.ms == nil || s.at.IsZero() {
			t.Errorf("%s: report %v, scene %v", step.name, step.ms, s.at)
			continue
		}
		within(t, step.name, r.at(*step.ms), s.at, watchLag)
		if d := r.at(*step.ms).Sub(s.api); !s.api.IsZero() && (d < -100*time.Millisecond || d > 1100*time.Millisecond) {
			t.Errorf("%s: report %s is not within the API timestamp's second %s", step.name, r.at(*step.ms).Format("15:04:05.000"), s.api.Format("15:04:05"))
		}
	}
	if rc.EndpointsBackMs == nil {
		t.Errorf("endpoints back not seen (events %v)", r.Events)
	}
}

var textRow = map[string]*regexp.Regexp{}
var textRowMu sync.Mutex

// textCount reads "  NAME   N" from the text report's totals.
func textCount(t *testing.T, out, name string) int {
	t.Helper()
	textRowMu.Lock()
	re, ok := textRow[name]
	if !ok {
		re = regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(name) + `\s+(\d+)$`)
		textRow[name] = re
	}
	textRowMu.Unlock()
	m := re.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q row in the text report:\n%s", name, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func headUnchanged(h *H, head corev1.Pod) {
	h.T.Helper()
	p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, head.Name, metav1.GetOptions{})
	if err != nil || p.UID != head.UID || p.DeletionTimestamp != nil {
		h.T.Fatalf("head %s was touched: err %v, deletionTimestamp %v", head.Name, err, p.GetDeletionTimestamp())
	}
}

// TestHeadKillBadInputAndURL: every bad input exits with its documented code and kills nothing;
// then a --target URL run against a local server kills the head and counts what the server saw.
func TestHeadKillBadInputAndURL(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("bad", onNode(headKillNode(h, "hk-bad")))
	head := h.WaitClusterRunning("bad", 120*time.Second)

	// Services: one selecting every pod of the cluster (ready endpoints), one selecting none.
	for name, sel := range map[string]map[string]string{"bad-all": {"ray.io/cluster": "bad"}, "bad-empty": {"app": "none"}} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.NS}, Spec: corev1.ServiceSpec{
			Selector: sel, Ports: []corev1.ServicePort{{Name: "serve", Port: 8000, TargetPort: intstr.FromInt32(8000)}}}}
		if _, err := h.Kube.CoreV1().Services(h.NS).Create(h.Ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.WaitFor("ready endpoints behind bad-all", 30*time.Second, func() (bool, error) {
		l, err := h.Kube.DiscoveryV1().EndpointSlices(h.NS).List(h.Ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=bad-all"})
		return err == nil && len(l.Items) > 0 && len(l.Items[0].Endpoints) == 2, err
	})
	// A user who may do everything the command needs except port-forward.
	noForwardUser(h, "hk-noforward")
	closed := closedPort(t)
	unreachable := "http://127.0.0.1:" + strconv.Itoa(closed)

	short := []string{"--warmup", "1s", "--after", "1s"}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown cluster", []string{"nope", "--target", unreachable, "--yes"}, 5, `error: RayCluster "nope" not found in namespace "` + h.NS + `"; list them with: kubectl get rayclusters -n ` + h.NS},
		{"unknown RayService", []string{"rayservice/nope", "--yes"}, 5, `error: RayService "nope" not found in namespace "` + h.NS + `"; list them with: kubectl get rayservices -n ` + h.NS},
		{"unknown Service", []string{"bad", "--service", "missing", "--port", "8000", "--yes"}, 5, `error: Service "missing" not found in namespace "` + h.NS + `"; list them with: kubectl get services -n ` + h.NS},
		{"Service without ready endpoints", []string{"bad", "--service", "bad-empty", "--port", "8000", "--yes"}, 5, "has no ready endpoints"},
		{"Service without the port", []string{"bad", "--service", "bad-all", "--port", "9000", "--yes"}, 2, "has no TCP port 9000"},
		{"unreachable URL", []string{"bad", "--target", unreachable, "--yes"}, 2, "error: nothing was killed: "},
		{"nothing to probe", []string{"bad", "--yes"}, 2, "say what to probe"},
		{"rate zero", []string{"bad", "--target", unreachable, "--rate", "0", "--yes"}, 2, "is not positive"},
		{"rate absurd", []string{"bad", "--target", unreachable, "--rate", "1000000/s", "--yes"}, 2, "above the probe's limit"},
		{"rate not a number", []string{"bad", "--target", unreachable, "--rate", "fast", "--yes"}, 2, "is not a number"},
		{"negative warm-up", []string{"bad", "--target", unreachable, "--warmup", "-1s", "--yes"}, 2, "--warmup must be positive"},
		{"duration not a duration", []string{"bad", "--target", unreachable, "--after", "soon", "--yes"}, 2, "soon"},
		{"after and until-recovered", []string{"bad", "--target", unreachable, "--after", "5s", "--until-recovered", "--yes"}, 2, "exclude each other"},
		{"bad mode", []string{"bad", "--target", unreachable, "--mode", "shoot", "--yes"}, 2, "--mode must be"},
		{"bad availability", []string{"bad", "--target", unreachable, "--min-availability", "101", "--yes"}, 2, "percentage"},
		{"not a URL", []string{"bad", "--target", "ftp://x", "--yes"}, 2, "not an http or https URL"},
		{"report file in a missing directory", []string{"bad", "--target", unreachable, "--report-html", "/no/such/dir/r.html", "--yes"}, 2, "--report-html /no/such/dir/r.html: no such file or directory"},
		{"credentials in the URL", []string{"bad", "--target", "http://u:hunter2secret@127.0.0.1:1/", "--yes"}, 2, "has credentials in it"},
		{"no --yes without a terminal", []string{"bad", "--target", unreachable}, 6, "without --yes"},
		{"no RBAC to delete", []string{"bad", "--service", "bad-all", "--port", "8000", "--context", "sandbox-reader", "--yes"}, 4, `you cannot delete pods`},
		{"no RBAC to evict", []string{"bad", "--service", "bad-all", "--port", "8000", "--mode", "evict", "--context", "sandbox-reader", "--yes"}, 4, `you cannot create pods/eviction`},
		{"no RBAC to port-forward", []string{"bad", "--service", "bad-all", "--port", "8000", "--as", "hk-noforward", "--yes"}, 4, `you cannot create pods/portforward`},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			args := append([]string{"chaos", "head-kill"}, c.args...)
			if !hasFlag(c.args, "--warmup") && !hasFlag(c.args, "--after") && !hasFlag(c.args, "--until-recovered") {
				args = append(args, short...)
			}
			res := h.Run(args...)
			if res.Code != c.code || !strings.Contains(res.Stderr, c.want) {
				t.Errorf("want exit %d and %q on stderr, got %s", c.code, c.want, res)
			}
			// One clear line; only a run that got as far as the warm-up prints progress first.
			if lines := strings.Split(strings.TrimSpace(res.Stderr), "\n"); len(lines) != 1 && c.name != "unreachable URL" {
				t.Errorf("want one line on stderr, got %d:\n%s", len(lines), res.Stderr)
			}
			// A failed warm-up says first, and briefly, that nothing was killed.
			if c.name == "unreachable URL" {
				save("warmup-failed.txt", "$ kubectl ray "+strings.Join(args, " ")+"\n"+res.Stdout+res.Stderr)
			}
			if c.name == "unreachable URL" && (!strings.HasPrefix(res.Stdout, "Nothing was killed: the warm-up failed") ||
				strings.Count(res.Stdout, "\n") > 5 || strings.Contains(res.Stdout, "Stopped early")) {
				t.Errorf("a failed warm-up's report: %q", res.Stdout)
			}
			if strings.Contains(res.Stdout+res.Stderr, "hunter2secret") {
				t.Errorf("a credential from the URL was printed: %s", res)
			}
			headUnchanged(h, head)
		})
	}

	// --target URL: a local server answers every request; the head is killed for real.
	var mu sync.Mutex
	seen := map[int]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := http.StatusOK
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/healthz" || r.Method != http.MethodPost || r.Header.Get("X-Probe") != "head-kill" || string(body) != `{"ping":1}` {
			code = http.StatusTeapot
		}
		mu.Lock()
		seen[code]++
		mu.Unlock()
		w.WriteHeader(code)
	}))
	defer srv.Close()
	// Run as a user holding only docs/rbac.md's chaos-head-kill role, as written there.
	applier, err := sandbox.NewApplier(h.SB.Admin)
	if err != nil {
		t.Fatal(err)
	}
	applyDocRoles(h, applier)
	docUser := "hk-docrole-" + h.NS
	if _, err := h.Kube.RbacV1().RoleBindings(h.NS).Create(h.Ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "hk-docrole", Namespace: h.NS},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "kubectl-ray:chaos-head-kill"},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: docUser}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res := h.Run("--as", docUser, "chaos", "head-kill", "bad", "--target", srv.URL+"/healthz", "--method", "POST", "--header", "X-Probe: head-kill",
		"--data", `{"ping":1}`, "--rate", "20/s", "--warmup", "1s", "--after", "5s", "--max-errors", "0", "-o", "json", "--yes")
	if res.Code != 0 {
		t.Fatalf("--target URL: want exit 0, got %s", res)
	}
	r := parseHeadKillReport(t, res)
	mu.Lock()
	got := seen
	mu.Unlock()
	u, _ := url.Parse(srv.URL)
	// 20 in the 1 s warm-up, 100 in the 5 s after the kill (counted from the kill), and the one
	// or two due while the warm-up drained and the kill's API calls ran.
	if r.Totals.Requests != got[200] || r.Totals.ByStatus["200"] != got[200] || len(got) != 1 || r.Totals.Requests < 120 || r.Totals.Requests > 130 {
		t.Errorf("report requests %d byStatus %v; the server answered %v (want the same, 120 to 130 200s)", r.Totals.Requests, r.Totals.ByStatus, got)
	}
	if len(r.Endpoints) != 1 || r.Endpoints[0].Name != u.Host {
		t.Errorf("endpoints %+v, want one named %s", r.Endpoints, u.Host)
	}
	if r.Recovery.OldHead != head.Name || r.Recovery.NewHeadCreatedMs == nil {
		t.Errorf("recovery %+v: want the kill of %s and a new head", r.Recovery, head.Name)
	}
	if p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, head.Name, metav1.GetOptions{}); err == nil && p.UID == head.UID && p.DeletionTimestamp == nil {
		t.Errorf("head %s was not killed", head.Name)
	} else if err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
	}
}

func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return p
}

// noForwardUser binds user to a Role with everything head-kill needs but pods/portforward.
func noForwardUser(h *H, user string) {
	h.T.Helper()
	read := []string{"get", "list", "watch"}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: h.NS}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: append(read, "delete")},
		{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: read},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: read},
		{APIGroups: []string{"ray.io"}, Resources: []string{"rayclusters", "rayservices", "rayjobs"}, Verbs: read},
	}}
	if _, err := h.Kube.RbacV1().Roles(h.NS).Create(h.Ctx, role, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: h.NS},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}
	if _, err := h.Kube.RbacV1().RoleBindings(h.NS).Create(h.Ctx, rb, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
}
