package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// acceptDoc is the part of the -o json DoctorReport that accept files add, declared here so a
// renamed field on the wire fails the test.
type acceptDoc struct {
	Summary struct {
		Errors   int `json:"errors"`
		Accepted int `json:"accepted"`
	} `json:"summary"`
	Findings []struct {
		Rule     string `json:"rule"`
		Accepted *struct {
			Reason  string `json:"reason"`
			Expires string `json:"expires"`
			File    string `json:"file"`
			Line    int    `json:"line"`
		} `json:"accepted"`
	} `json:"findings"`
	Acceptance *struct {
		Files   []string `json:"files"`
		Expired []struct {
			File string `json:"file"`
			Line int    `json:"line"`
		} `json:"expired"`
		Stale []struct {
			File  string   `json:"file"`
			Line  int      `json:"line"`
			Rules []string `json:"rules"`
		} `json:"stale"`
	} `json:"acceptance"`
}

func writeTemp(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// acceptFile accepts head-crashloop on ns/cluster until expires (line 4), and head-pending on
// the same cluster (line 8), which matches nothing: stale.
func acceptFile(t *testing.T, ns, cluster, expires string) string {
	return writeTemp(t, "accept.yaml", fmt.Sprintf(`apiVersion: kubectl-ray.io/v1alpha1
kind: AcceptedFindings
accept:
- rules: [head-crashloop]
  cluster: %[1]s/%[2]s
  reason: the image fix ships with the next release (TICKET-7)
  expires: %[3]s
- rules: [head-pending]
  cluster: %[1]s/%[2]s
  reason: waiting for GPU quota
  expires: %[3]s
`, ns, cluster, expires))
}

// An accepted crash-looping head: still printed, marked accepted with its reason, and exit 0
// with --fail-on error. The same entry past its date: exit 1 and a warning naming file:line.
// The crash loop is the kubelet's part, played through the API.
func TestAcceptCrashLoopingHead(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("oom", nil)
	head := h.WaitClusterRunning("oom", 90*time.Second)
	if _, err := play.KubeletCrashLoop(h.Ctx, h.Kube, h.NS, head.Name, "OOMKilled", 6); err != nil {
		t.Fatal(err)
	}
	if r := h.Run("doctor", "--fail-on", "error"); r.Code != 1 || !strings.Contains(r.Stdout, "head-crashloop") {
		t.Fatalf("without an accept file the crash loop must fail the check: %s", r)
	}

	live := acceptFile(t, h.NS, "oom", time.Now().UTC().AddDate(0, 0, 30).Format(time.DateOnly))
	tab := h.Run("doctor", "--fail-on", "error", "--accept", live)
	if tab.Code != 0 {
		t.Fatalf("accepted crash loop: want exit 0, got %s", tab)
	}
	wantContains(t, "table", tab.Stdout, "Accepted (reported, not counted toward --fail-on)\n", "head-crashloop", h.NS+"/oom", "pod/"+head.Name,
		"CrashLoopBackOff (6 restarts)", "("+live+":4): the image fix ships with the next release (TICKET-7)", "1 finding accepted.\n")
	wantContains(t, "stderr", tab.Stderr, "warning: "+live+":8: accepted head-pending on cluster "+h.NS+"/oom matched no finding")

	var d acceptDoc
	js := h.Run("doctor", "-o", "json", "--accept", live)
	if err := json.Unmarshal([]byte(js.Stdout), &d); err != nil || js.Code != 0 {
		t.Fatalf("json: %v\n%s", err, js)
	}
	var accepted []string
	for _, f := range d.Findings {
		if f.Accepted != nil {
			accepted = append(accepted, fmt.Sprintf("%s %s:%d %s", f.Rule, f.Accepted.File, f.Accepted.Line, f.Accepted.Reason))
		}
	}
	if want := "head-crashloop " + live + ":4 the image fix ships with the next release (TICKET-7)"; len(accepted) != 1 || accepted[0] != want {
		t.Errorf("accepted findings %q, want [%q]", accepted, want)
	}
	if d.Summary.Accepted != 1 || d.Summary.Errors != 0 || d.Acceptance == nil || len(d.Acceptance.Stale) != 1 ||
		d.Acceptance.Stale[0].Line != 8 || len(d.Acceptance.Expired) != 0 {
		t.Errorf("summary %+v acceptance %+v", d.Summary, d.Acceptance)
	}
	ju := h.Run("doctor", "-o", "junit", "--accept", live)
	wantContains(t, "junit", ju.Stdout, `<testcase name="head-crashloop" classname="`+h.NS+`/oom">`,
		`<skipped message="accepted, expires `)
	if ju.Code != 0 || strings.Contains(ju.Stdout, "<failure") {
		t.Errorf("junit: an accepted finding must be skipped, not failed: %s", ju)
	}

	expired := acceptFile(t, h.NS, "oom", time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly))
	r := h.Run("doctor", "--fail-on", "error", "--accept", expired)
	if r.Code != 1 || strings.Contains(r.Stdout, "Accepted (") {
		t.Fatalf("expired entry: want exit 1 and nothing accepted, got %s", r)
	}
	wantContains(t, "stderr", r.Stderr, "warning: "+expired+":4: accepted head-crashloop on cluster "+h.NS+"/oom expired on ",
		"so its findings count again")
}

// A malformed accept file is one line naming file:line, exit 2, and doctor makes no API call:
// against a kubeconfig whose server does not answer, it still reports the file.
func TestAcceptMalformedFileRunsNothing(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	bad := writeTemp(t, "accept.yaml", "apiVersion: kubectl-ray.io/v1alpha1\nkind: AcceptedFindings\naccept:\n"+
		"- rules: [head-crashloop]\n  cluster: ml/*\n  reason: r\n  expires: 2026-02-30\n")
	good := acceptFile(t, "ml", "x", "2099-01-01")
	// Port 1 on loopback: nothing listens there.
	kubeconfig := writeTemp(t, "kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: nowhere, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: nowhere, context: {cluster: nowhere, user: u, namespace: ml}}]
current-context: nowhere
`)
	run := func(extraEnv []string, args ...string) Result {
		return h.exec(env.bin, append([]string{"--kubeconfig", kubeconfig}, args...), extraEnv)
	}
	// The kubeconfig is unreachable indeed: with a good file, doctor gets as far as the API.
	if r := run(nil, "doctor", "--accept", good); r.Code != 3 {
		t.Fatalf("with a good accept file doctor must reach for the API and fail (exit 3): %s", r)
	}
	line := bad + `:7: expires "2026-02-30" is not a date; write YYYY-MM-DD`
	wantOneLineError(t, run(nil, "doctor", "--accept", bad), 2, line)
	wantOneLineError(t, run([]string{"KUBECTL_RAY_ACCEPT=" + bad}, "doctor"), 2, line)
	wantOneLineError(t, run(nil, "heal", "--yes", "--accept", bad), 2, line)
	wantOneLineError(t, run(nil, "doctor", "--pending-too-long", "-1m"), 2, "--pending-too-long -1m0s must be positive")
	// And on the real sandbox, the same: exit 2, nothing printed on stdout.
	wantOneLineError(t, h.Run("doctor", "--accept", bad, "-o", "json"), 2, line)
}

// --pending-too-long decides when a Pending head is reported. The head names a scheduler that
// does not exist, so it stays Pending with no Unschedulable verdict: only the threshold speaks.
func TestThresholdPendingHead(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("waiting", func(rc *rayv1.RayCluster) {
		rc.Spec.HeadGroupSpec.Template.Spec.SchedulerName = "no-such-scheduler"
	})
	var head corev1.Pod
	h.WaitFor("the head pod, Pending", 60*time.Second, func() (bool, error) {
		heads := h.Pods("waiting", "head")
		if len(heads) != 1 || heads[0].Status.Phase != corev1.PodPending {
			return false, nil
		}
		head = heads[0]
		return true, nil
	})
	if wait := time.Until(head.CreationTimestamp.Add(3 * time.Second)); wait > 0 {
		time.Sleep(wait)
	}
	pending := rule("head-pending", "pod", head.Name)
	has := func(d drDoc) bool {
		for _, r := range d.rules("waiting") {
			if r == pending {
				return true
			}
		}
		return false
	}
	d, res := h.doctorJSON()
	if has(d) || res.Code != 0 {
		t.Fatalf("default 5m: a head Pending for seconds is not reported: %s", res)
	}
	d, res = h.doctorJSON("--pending-too-long", "2s")
	if !has(d) || res.Code != 1 {
		t.Fatalf("--pending-too-long 2s: want head-pending and exit 1: %s", res)
	}
	wantContains(t, "message", d.finding(t, "waiting", "head-pending").Message, "head pod "+head.Name+" has been Pending for ", "(longer than 2s)")

	// The same threshold from an accept file; a flag wins over the file.
	file := writeTemp(t, "thresholds.yaml", "apiVersion: kubectl-ray.io/v1alpha1\nkind: AcceptedFindings\nthresholds:\n  pendingTooLong: 2s\n")
	if d, res = h.doctorJSON("--accept", file); !has(d) || res.Code != 1 {
		t.Errorf("thresholds.pendingTooLong: 2s in the file: want head-pending: %s", res)
	}
	if d, res = h.doctorJSON("--accept", file, "--pending-too-long", "1h"); has(d) || res.Code != 0 {
		t.Errorf("--pending-too-long 1h over the file's 2s: want no finding: %s", res)
	}
}
