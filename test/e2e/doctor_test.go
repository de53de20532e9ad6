package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// The v1.1.1 operator is found and reported outdated in every test on the shared sandbox.
const outdatedV111 = "operator-outdated deployment/kuberay-operator"

// A healthy cluster yields no finding about it; a broken pod that is not a Ray pod yields none;
// the only finding is the operator's own (v1.1.1 has the evicted-head bug).
func TestDoctorHealthyClusterIsSilent(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("fine", nil)
	h.WaitClusterRunning("fine", 90*time.Second)
	// A pod that is not a Ray pod (no ray.io/is-ray-node), evicted (kubelet played through the
	// API): never a finding. It names the cluster but is no head: KubeRay v1.1.1 counts every pod
	// labelled node-type=head as one, and deleted such a bystander as an extra head under load.
	bystander := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bystander", Labels: map[string]string{"ray.io/cluster": "fine"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if _, err := h.Kube.CoreV1().Pods(h.NS).Create(h.Ctx, bystander, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("bystander Running", 60*time.Second, func() (bool, error) {
		p, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, "bystander", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
	if _, err := play.KubeletEvict(h.Ctx, h.Kube, h.NS, "bystander", "memory"); err != nil {
		t.Fatal(err)
	}

	d, res := h.doctorJSON()
	if res.Code != 0 {
		t.Fatalf("healthy cluster: %s", res)
	}
	wantRules(t, d, "fine")
	wantRules(t, d, "", outdatedV111)
	if d.Summary.Clusters != 1 || d.Summary.Healthy != 1 || d.health("fine") != "healthy" {
		t.Fatalf("summary %+v, health %q", d.Summary, d.health("fine"))
	}
	if len(d.Operators) != 1 || d.Operators[0].Version != "v1.1.1" || d.Operators[0].Namespace != "kuberay-system" {
		t.Fatalf("operators %+v", d.Operators)
	}

	// The risks of its spec (KubeRay's sample: the head requests no ephemeral-storage) only with
	// --risks, as info: the verdict does not change.
	risky, res := h.doctorJSON("--risks")
	if res.Code != 0 || risky.health("fine") != "healthy" {
		t.Fatalf("doctor --risks on a healthy cluster: %s", res)
	}
	if f := risky.finding(t, "fine", "head-evictable-first"); f.Severity != "info" {
		t.Errorf("head-evictable-first is %s, want info", f.Severity)
	}

	// Table, not a terminal: no color codes; the cluster is only counted.
	tab := h.Run("doctor")
	if tab.Code != 0 || strings.Contains(tab.Stdout, "\x1b[") || strings.Contains(tab.Stdout, "RayCluster "+h.NS) {
		t.Fatalf("table: %s", tab)
	}
	wantContains(t, "table", tab.Stdout, "KubeRay operator\n", "operator-outdated", "1 RayCluster checked: 1 healthy, 0 with errors, 0 with warnings.\n")

	// --fail-on: the operator warning fails `warning`, nothing fails `error` or `never`.
	for _, c := range []struct {
		failOn string
		code   int
	}{{"error", 0}, {"warning", 1}, {"never", 0}} {
		if r := h.Run("doctor", "--fail-on", c.failOn); r.Code != c.code {
			t.Errorf("--fail-on %s: want exit %d, got %s", c.failOn, c.code, r)
		}
	}
}

// head-evicted on KubeRay v1.1.1 (seed 000): the head stays Failed/Evicted and doctor says the
// operator will not replace it. The eviction is the kubelet's part, played through the API.
func TestDoctorHeadEvictedKubeRayV111(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("evicted", nil)
	head := h.WaitClusterRunning("evicted", 90*time.Second)
	h.WaitStateReady("evicted", 60*time.Second) // status-stale needs the state v1.1.1 writes
	if _, err := play.KubeletEvict(h.Ctx, h.Kube, h.NS, head.Name, "ephemeral-storage"); err != nil {
		t.Fatal(err)
	}
	d, res := h.doctorJSON()
	if res.Code != 1 {
		t.Fatalf("want exit 1 for an error finding: %s", res)
	}
	// v1.1.1 keeps .status.state ready for a cluster whose head was evicted (kuberay #2188).
	wantRules(t, d, "evicted", rule("head-evicted", "pod", head.Name), "status-stale raycluster/evicted")
	f := d.finding(t, "evicted", "head-evicted")
	wantContains(t, "message", f.Message, "head pod "+head.Name+" was evicted from node "+head.Spec.NodeName,
		"The node was low on resource: ephemeral-storage",
		"KubeRay v1.1.1 will not replace it: it skips Failed heads with restartPolicy Always (kuberay #2125, fixed in v1.2.0)")
	wantContains(t, "remedy", f.Remedy, "kubectl ray heal evicted -n "+h.NS, "kubectl delete pod "+head.Name+" -n "+h.NS)
	if f.Severity != "error" || f.Evidence["node"] != head.Spec.NodeName || f.Evidence["reason"] != "Evicted" || f.Evidence["operator"] != "KubeRay v1.1.1" {
		t.Errorf("finding %+v", f)
	}
	if d.health("evicted") != "error" || d.Summary.WithErrors != 1 {
		t.Errorf("health %q summary %+v", d.health("evicted"), d.Summary)
	}

	// The table says the same, grouped under the cluster; -o wide adds node and operator version.
	tab := h.Run("doctor")
	wantContains(t, "table", tab.Stdout, "RayCluster "+h.NS+"/evicted: error\n", "head-evicted", "pod/"+head.Name,
		"KubeRay v1.1.1 will not replace it", "fix: run `kubectl ray heal evicted -n "+h.NS+"`",
		"1 RayCluster checked: 0 healthy, 1 with errors, 0 with warnings.\n")
	wide := h.Run("doctor", "-o", "wide")
	group := h.sampleCluster("x").Spec.WorkerGroupSpecs[0].GroupName
	wantContains(t, "wide", wide.Stdout, "(head "+head.Name+" on "+head.Spec.NodeName+"; workers "+group+" ", " ready", "; age ", "operator v1.1.1)", "NODE", "AGE")
	if tab.Code != 1 || wide.Code != 1 || strings.Contains(tab.Stdout+wide.Stdout, "\x1b[") {
		t.Errorf("table exit %d, wide exit %d (want 1, 1, no color codes)", tab.Code, wide.Code)
	}
	// Naming the cluster checks it alone; --fail-on never still reports it but exits 0.
	if r := h.Run("doctor", "raycluster/evicted", "--fail-on", "never"); r.Code != 0 || !strings.Contains(r.Stdout, "head-evicted") {
		t.Errorf("raycluster/evicted --fail-on never: %s", r)
	}

	// -o prometheus: the same findings as gauges, read back with Prometheus' exposition parser.
	prom := h.Run("doctor", "-o", "prometheus")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(prom.Stdout))
	if prom.Code != 1 || err != nil {
		t.Fatalf("-o prometheus: %v\n%s", err, prom)
	}
	wantSample(t, mfs, 1, "kubectl_ray_doctor_findings", "namespace", h.NS, "raycluster", "evicted", "rule", "head-evicted", "severity", "error")
	wantSample(t, mfs, 1, "kubectl_ray_doctor_clusters", "health", "error")
	wantSample(t, mfs, 0, "kubectl_ray_doctor_clusters", "health", "healthy")

	// The read-only user sees everything doctor needs: same findings.
	rd, rres := h.doctorJSON("--context", "sandbox-reader")
	if rres.Code != 1 || rres.Stderr != "" || len(rd.Blind) != 0 {
		t.Fatalf("sandbox-reader: %s", rres)
	}
	wantRules(t, rd, "evicted", rule("head-evicted", "pod", head.Name), "status-stale raycluster/evicted")
	// A user who cannot list nodes: doctor works, says what it did not see, exit code from findings.
	nd, nres := h.doctorJSON("--context", "sandbox-no-nodes")
	if nres.Code != 1 {
		t.Fatalf("sandbox-no-nodes: %s", nres)
	}
	wantRules(t, nd, "evicted", rule("head-evicted", "pod", head.Name), "status-stale raycluster/evicted")
	if len(nd.Blind) != 1 || nd.Blind[0].Resource != "nodes" {
		t.Fatalf("blind: %+v", nd.Blind)
	}
	wantContains(t, "blind reason", nd.Blind[0].Reason, `forbidden: you cannot list nodes cluster-wide`, "kubectl auth can-i list nodes -A")
	wantContains(t, "stderr", nres.Stderr, "warning: doctor could not see nodes, so the rules that need them did not run: forbidden:")
	ntab := h.Run("--context", "sandbox-no-nodes", "doctor")
	if ntab.Code != 1 || !strings.Contains(ntab.Stderr, "could not see nodes") || !strings.Contains(ntab.Stdout, "head-evicted") {
		t.Errorf("sandbox-no-nodes table: %s", ntab)
	}
}

// head-terminated: graceful node shutdown (the kubelet's part, played) leaves the head Failed with
// reason Terminated; v1.1.1 does not replace it either.
func TestDoctorHeadTerminated(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("shut", nil)
	head := h.WaitClusterRunning("shut", 90*time.Second)
	h.WaitStateReady("shut", 60*time.Second) // status-stale needs the state v1.1.1 writes
	h.kubeletNodeShutdown(head.Name)
	d, res := h.doctorJSON()
	if res.Code != 1 {
		t.Fatalf("%s", res)
	}
	wantRules(t, d, "shut", rule("head-terminated", "pod", head.Name), "status-stale raycluster/shut")
	f := d.finding(t, "shut", "head-terminated")
	wantContains(t, "message", f.Message, "head pod "+head.Name+" on node "+head.Spec.NodeName+" is Failed (Terminated), container exited 137 (Error)",
		"KubeRay v1.1.1 will not replace it")
	if f.Evidence["exitCode"] != "137" || f.Evidence["reason"] != "Terminated" {
		t.Errorf("evidence %v", f.Evidence)
	}
}

// head-pending: the real scheduler finds no node for an impossible nodeSelector and writes the
// Unschedulable condition; doctor quotes it.
func TestDoctorHeadPendingUnschedulable(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	head := h.unschedulableHead("nowhere")
	d, res := h.doctorJSON()
	if res.Code != 1 {
		t.Fatalf("%s", res)
	}
	wantRules(t, d, "nowhere", rule("head-pending", "pod", head.Name))
	f := d.finding(t, "nowhere", "head-pending")
	wantContains(t, "message", f.Message, "head pod "+head.Name+" is Pending for ", "Unschedulable: 0/", "node(s) didn't match Pod's node affinity/selector")
	if !strings.Contains(f.Evidence["schedulerMessage"], "didn't match Pod's node affinity/selector") {
		t.Errorf("evidence %v", f.Evidence)
	}
}

// head-crashloop and worker-crashloop: OOMKilled in CrashLoopBackOff; image-pull-failed: a head's
// and a worker's ImagePullBackOff, each with the kubelet's message (the kubelet's part played).
func TestDoctorHeadCrashLoopAndImagePull(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("oom", nil)
	h.CreateRayCluster("pull", nil)
	h.CreateRayCluster("wpull", nil)
	h.CreateRayCluster("wcrash", nil)
	oom := h.WaitClusterRunning("oom", 90*time.Second)
	pull := h.WaitClusterRunning("pull", 90*time.Second)
	h.WaitClusterRunning("wpull", 90*time.Second)
	h.WaitClusterRunning("wcrash", 90*time.Second)
	worker := h.waitWorker("wpull", "", 60*time.Second)
	crasher := h.waitWorker("wcrash", "", 60*time.Second)
	h.WaitStateReady("oom", 60*time.Second) // status-stale needs the state v1.1.1 writes
	h.WaitStateReady("pull", 60*time.Second)
	if _, err := play.KubeletCrashLoop(h.Ctx, h.Kube, h.NS, oom.Name, "OOMKilled", 6); err != nil {
		t.Fatal(err)
	}
	if _, err := play.KubeletCrashLoop(h.Ctx, h.Kube, h.NS, crasher.Name, "OOMKilled", 4); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{pull.Name, worker.Name} {
		if _, err := play.KubeletImagePullBackOff(h.Ctx, h.Kube, h.NS, name); err != nil {
			t.Fatal(err)
		}
	}
	d, res := h.doctorJSON()
	if res.Code != 1 {
		t.Fatalf("%s", res)
	}
	wantRules(t, d, "oom", rule("head-crashloop", "pod", oom.Name), "status-stale raycluster/oom")
	wantRules(t, d, "pull", rule("image-pull-failed", "pod", pull.Name), "status-stale raycluster/pull")
	wantRules(t, d, "wpull", rule("image-pull-failed", "pod", worker.Name))
	wantRules(t, d, "wcrash", rule("worker-crashloop", "pod", crasher.Name))
	wc := d.finding(t, "wcrash", "worker-crashloop")
	wantContains(t, "worker crash message", wc.Message, "1 worker pod(s) of group ", " keep failing in container "+crasher.Spec.Containers[0].Name+
		": worker "+crasher.Name+" is CrashLoopBackOff, last exit OOMKilled (4 restarts)")
	f := d.finding(t, "oom", "head-crashloop")
	wantContains(t, "oom message", f.Message, "head pod "+oom.Name+" container ray-head is CrashLoopBackOff (6 restarts); last exit OOMKilled")
	wantContains(t, "oom remedy", f.Remedy, "raise headGroupSpec's memory limit")
	image := pull.Spec.Containers[0].Image
	p := d.finding(t, "pull", "image-pull-failed")
	wantContains(t, "pull message", p.Message, "head pod "+pull.Name+" cannot pull image "+image+" for container ray-head (ImagePullBackOff): "+
		`Back-off pulling image "`+image+`": ErrImagePull: `)
	w := d.finding(t, "wpull", "image-pull-failed")
	wantContains(t, "worker pull message", w.Message, "1 worker pod(s) of group ", "cannot pull images; worker "+worker.Name+" cannot pull image ")
	if p.Severity != "error" || w.Evidence["workers"] != worker.Name {
		t.Errorf("severity %s, evidence %v", p.Severity, w.Evidence)
	}
	hd, res := h.healJSON("--dry-run")
	if res.Code != 0 || len(hd.Plan.Actions) != 0 {
		t.Fatalf("heal acts on a pull failure: %s", res)
	}
	var skipped int
	for _, sk := range hd.Plan.NotHealable {
		if sk.Rule == "image-pull-failed" {
			skipped++
			wantContains(t, "heal's why", sk.Why, "a new pod would pull the same image")
		}
	}
	if skipped != 2 {
		t.Errorf("heal lists %d image-pull-failed findings as not healable, want 2: %s", skipped, res)
	}
}

// status-stale alone: the head runs but fails its readiness probe (played), while v1.1.1 keeps
// the RayCluster's state ready.
func TestDoctorStatusStale(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("stale", nil)
	head := h.WaitClusterRunning("stale", 90*time.Second)
	h.WaitStateReady("stale", 60*time.Second) // before the head turns NotReady
	if _, err := play.KubeletPodNotReady(h.Ctx, h.Kube, h.NS, head.Name); err != nil {
		t.Fatal(err)
	}
	rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, "stale", metav1.GetOptions{})
	if err != nil || rc.Status.State != rayv1.Ready {
		t.Fatalf("want the v1.1.1 operator's state to stay ready, got %q (%v)", rc.Status.State, err)
	}
	d, res := h.doctorJSON()
	if res.Code != 0 {
		t.Fatalf("a warning alone must not fail --fail-on error: %s", res)
	}
	wantRules(t, d, "stale", "status-stale raycluster/stale")
	wantContains(t, "message", d.finding(t, "stale", "status-stale").Message,
		"reports ready (state=ready) but its head pod "+head.Name+" Running, not Ready")
	if d.health("stale") != "warning" {
		t.Errorf("health %q", d.health("stale"))
	}
	if r := h.Run("doctor", "--fail-on", "warning"); r.Code != 1 {
		t.Errorf("--fail-on warning: %s", r)
	}
}
