package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// healDoctor is the part of doctor's -o json heal's tests read.
type healDoctor struct {
	Findings []struct {
		Rule     string `json:"rule"`
		Severity string `json:"severity"`
		Cluster  *struct {
			Name string `json:"name"`
		} `json:"cluster"`
		Object struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"object"`
	} `json:"findings"`
}

// doctorFindings runs doctor -o json on cluster and returns its exit code and the findings as
// "severity rule kind/name".
func (h *H) doctorFindings(cluster string) (int, []string) {
	h.T.Helper()
	res := h.Run("doctor", cluster, "-o", "json")
	var d healDoctor
	if err := json.Unmarshal([]byte(res.Stdout), &d); err != nil {
		h.T.Fatalf("doctor -o json: %v\n%s", err, res)
	}
	var out []string
	for _, f := range d.Findings {
		out = append(out, fmt.Sprintf("%s %s %s/%s", f.Severity, f.Rule, strings.ToLower(f.Object.Kind), f.Object.Name))
	}
	return res.Code, out
}

// evictedSummary is what heal's plan line and Events say of a head evicted by play.KubeletEvict.
const evictedSummary = "phase Failed (Evicted): The node was low on resource: ephemeral-storage"

// matchLines fails unless out has exactly as many lines as want and each matches its regular
// expression (anchored).
func matchLines(t *testing.T, what, out string, want ...string) {
	t.Helper()
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = regexp.MustCompile("^" + want[i] + "$").MatchString(got[i])
	}
	if !ok {
		t.Errorf("%s:\n--- got\n%s\n--- want (regular expressions)\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

const durRE = `[0-9.]+(ms|s|m[0-9.]+s)`

// Seed 000 end to end with the real KubeRay v1.1.1: the head is evicted (the kubelet's part,
// played by play.KubeletEvict), doctor reports head-evicted, heal --yes deletes it, the operator
// creates a new head, the RayCluster is ready again, doctor finds no error, and the Events name
// the old pod on both the RayCluster and the pod.
func TestHealSeed000(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	rc := h.CreateRayCluster("seed", nil)
	h.WaitClusterRunning("seed", 90*time.Second)
	old := h.healEvict("seed")

	t.Logf("doctor before heal:\n%s", h.Run("doctor", "seed"))
	code, findings := h.doctorFindings("seed")
	if code != 1 || !contains(findings, "error head-evicted pod/"+old.Name) {
		t.Fatalf("doctor before heal: exit %d, findings %q", code, findings)
	}

	evidenceDir := t.TempDir()
	res := h.Run("heal", "seed", "--yes", "--timeout", "90s", "--evidence-dir", evidenceDir)
	t.Logf("heal output:\n%s", res)
	if res.Code != 0 {
		t.Fatalf("heal: %s", res)
	}
	newHead := h.waitNewHead("seed", old.Name, 5*time.Second)
	ns := regexp.QuoteMeta(h.NS)
	kept := filepath.Join(evidenceDir, h.NS, old.Name+"-"+string(old.UID)[:8])
	matchLines(t, "heal stdout", res.Stdout,
		`Plan: 1 delete`,
		`  delete pod `+ns+`/`+old.Name+` of RayCluster seed \(head-evicted\)`,
		`    `+regexp.QuoteMeta(evictedSummary),
		`deleted pod `+ns+`/`+old.Name+` \(rule head-evicted\)`,
		`  kept its evidence \(YAML, Events, logs\) in `+regexp.QuoteMeta(kept),
		`  recorded Event RayHeadHealed on RayCluster `+ns+`/seed and on the pod`,
		`RayCluster `+ns+`/seed: new head `+newHead.Name+` created `+durRE+` after the delete, Running and Ready after `+durRE,
	)
	h.checkSeedEvidence(kept, old, res.Stderr)
	if !h.podGone(old.Name, string(old.UID)) {
		t.Errorf("the evicted head %s is still there", old.Name)
	}
	h.WaitClusterRunning("seed", 60*time.Second)
	h.WaitStateReady("seed", 60*time.Second)

	t.Logf("doctor after heal:\n%s", h.Run("doctor", "seed"))
	code, findings = h.doctorFindings("seed")
	for _, f := range findings {
		if strings.HasPrefix(f, "error ") {
			t.Errorf("doctor after heal still finds an error: %s", f)
		}
	}
	if code != 0 {
		t.Errorf("doctor after heal: exit %d, findings %q", code, findings)
	}

	evs := h.healEvents()
	onCluster := healEventsAbout(evs, "RayCluster", "seed")
	onPod := healEventsAbout(evs, "Pod", old.Name)
	if len(evs) != 2 || len(onCluster) != 1 || len(onPod) != 1 {
		t.Fatalf("want one RayHeadHealed Event on the RayCluster and one on the old pod, got %d: %+v", len(evs), evs)
	}
	msg := fmt.Sprintf("kubectl-ray heal deleted head pod %s (uid %s) for rule head-evicted: %s", old.Name, old.UID, evictedSummary)
	for _, c := range []struct {
		what, uid, related string
		ev                 corev1.Event
	}{
		{"on the RayCluster", string(rc.UID), old.Name, onCluster[0]},
		{"on the pod", string(old.UID), "seed", onPod[0]},
	} {
		ev := c.ev
		if string(ev.InvolvedObject.UID) != c.uid || ev.Related == nil || ev.Related.Name != c.related ||
			ev.Message != msg || ev.Type != "Normal" || ev.Action != "DeletePod" || ev.Source.Component != "kubectl-ray" {
			t.Errorf("Event %s: involved %+v related %+v type %s action %s source %+v message:\n  %s\nwant message:\n  %s",
				c.what, ev.InvolvedObject, ev.Related, ev.Type, ev.Action, ev.Source, ev.Message, msg)
		}
	}
}

// checkSeedEvidence: what heal kept of the evicted head before it deleted it. The pod's YAML as
// the kubelet left it and the kubelet's Evicted Event (both played here); its logs are not there,
// since no kubelet serves them on a kwok node, and heal says so in one warning and in the index.
func (h *H) checkSeedEvidence(kept string, old corev1.Pod, stderr string) {
	t := h.T
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(kept, name))
		if err != nil {
			t.Errorf("evidence: %v", err)
		}
		return string(b)
	}
	if pod := read("pod.yaml"); !strings.Contains(pod, "uid: "+string(old.UID)) || !strings.Contains(pod, "reason: Evicted") {
		t.Errorf("pod.yaml is not the evicted head:\n%s", pod)
	}
	if evs := read("events.txt"); !strings.Contains(evs, "Evicted") {
		t.Errorf("events.txt lacks the kubelet's Evicted Event:\n%s", evs)
	}
	index := read("index.md")
	for _, want := range []string{"# Evidence of pod " + h.NS + "/" + old.Name, "under rule head-evicted of RayCluster " + h.NS + "/seed",
		"## Not kept", "- log of container ray-head: ", "the API server could not get the log from the node's kubelet"} {
		if !strings.Contains(index, want) {
			t.Errorf("index.md lacks %q:\n%s", want, index)
		}
	}
	matchLines(t, "heal stderr", stderr,
		`warning: evidence of pod `+regexp.QuoteMeta(h.NS+"/"+old.Name)+` kept without [0-9]+ reads? \(log of container ray-head: .*kubelet.*\); healing anyway`)
}

// --dry-run prints the plan and changes nothing; without --yes and without a terminal heal
// refuses (exit 6) and changes nothing. The kubelet's eviction is played (play.KubeletEvict).
func TestHealDryRunAndRefusal(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("dry", nil)
	h.WaitClusterRunning("dry", 90*time.Second)
	old := h.healEvict("dry")
	ns := regexp.QuoteMeta(h.NS)
	plan := []string{
		`Plan: 1 delete`,
		`  delete pod ` + ns + `/` + old.Name + ` of RayCluster dry \(head-evicted\)`,
		`    ` + regexp.QuoteMeta(evictedSummary),
	}
	unchanged := func(after string) {
		t.Helper()
		p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, old.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("after %s: the evicted head: %v", after, err)
		}
		if p.UID != old.UID || p.ResourceVersion != old.ResourceVersion || p.DeletionTimestamp != nil {
			t.Errorf("after %s the evicted head changed: uid %s→%s resourceVersion %s→%s deletion %v",
				after, old.UID, p.UID, old.ResourceVersion, p.ResourceVersion, p.DeletionTimestamp)
		}
		if evs := h.healEvents(); len(evs) != 0 {
			t.Errorf("after %s: %d RayHeadHealed Events recorded: %+v", after, len(evs), evs)
		}
		if heads := h.Pods("dry", "head"); len(heads) != 1 {
			t.Errorf("after %s: heads %v", after, podNames(heads))
		}
	}

	dry := h.Run("heal", "dry", "--dry-run")
	t.Logf("heal --dry-run:\n%s", dry)
	if dry.Code != 0 || dry.Stderr != "" {
		t.Fatalf("heal --dry-run: %s", dry)
	}
	matchLines(t, "heal --dry-run stdout", dry.Stdout, append(plan,
		`would delete pod `+ns+`/`+old.Name+` \(rule head-evicted\); server-side dry run accepted, nothing changed`)...)
	unchanged("--dry-run")

	refused := h.Run("heal", "dry")
	t.Logf("heal without --yes:\n%s", refused)
	if refused.Code != 6 || refused.Stderr != "error: refusing to delete without confirmation: stdin is not a terminal; pass --yes to heal without asking\n" {
		t.Errorf("heal without --yes: %s", refused)
	}
	matchLines(t, "heal without --yes stdout", refused.Stdout, plan...)
	unchanged("heal without --yes")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
