package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// Seed 000 with the real KubeRay v1.1.1: an evicted head is never replaced.
func TestSeed000EvictedHeadStaysWithKubeRayV111(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("seed", nil)
	head := h.WaitClusterRunning("seed", 90*time.Second)

	// The kubelet's part (node-pressure eviction) is played through the API.
	if _, err := play.KubeletEvict(h.Ctx, h.Kube, h.NS, head.Name, "ephemeral-storage"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Second)
	heads := h.Pods("seed", "head")
	if len(heads) != 1 || heads[0].Name != head.Name {
		t.Fatalf("want the evicted head %s alone after 30s, got %d heads: %v", head.Name, len(heads), podNames(heads))
	}
	if heads[0].Status.Phase != corev1.PodFailed || heads[0].Status.Reason != "Evicted" {
		t.Fatalf("head %s is %s/%s, want Failed/Evicted", head.Name, heads[0].Status.Phase, heads[0].Status.Reason)
	}
	if log, _ := os.ReadFile(h.SB.LogPath("kuberay-operator")); !strings.Contains(string(log), "will not delete the Pod because its restartPolicy is set to 'Always'") {
		t.Errorf("operator log lacks the seed's 'will not delete the Pod' line")
	}

	// What a person had to do: delete the pod. The operator then makes a new head.
	if err := h.Kube.CoreV1().Pods(h.NS).Delete(h.Ctx, head.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	newHead := h.WaitClusterRunning("seed", 60*time.Second)
	if newHead.Name == head.Name {
		t.Fatalf("head %s was not replaced", head.Name)
	}
}

// KubeRay v1.5.0 (fixed since v1.2.0, PR #2217) replaces an evicted head by itself.
func TestEvictedHeadReplacedByKubeRayV150(t *testing.T) {
	t.Parallel()
	h := newHOn(t, sandboxV150(t))
	h.CreateRayCluster("fixed", nil)
	head := h.WaitClusterRunning("fixed", 90*time.Second)
	if _, err := play.KubeletEvict(h.Ctx, h.Kube, h.NS, head.Name, "memory"); err != nil {
		t.Fatal(err)
	}
	newHead := h.WaitClusterRunning("fixed", 60*time.Second)
	if newHead.Name == head.Name {
		t.Fatalf("head %s was not replaced", head.Name)
	}
	if _, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, head.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("evicted head %s still exists (err=%v)", head.Name, err)
	}
}

// `kubectl ray version` through kubectl's plugin discovery: the binary on PATH, invoked as `kubectl ray`.
func TestVersionThroughKubectlPluginDiscovery(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	res := h.Kubectl("ray", "version", "-o", "json")
	if res.Code != 0 {
		t.Fatalf("kubectl ray version: %s", res)
	}
	var info struct {
		ClientVersion struct{ Version string } `json:"clientVersion"`
		ServerVersion string                   `json:"serverVersion"`
		Operators     []struct{ Version, Namespace, Name string }
	}
	if err := json.Unmarshal([]byte(res.Stdout), &info); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, res)
	}
	if info.ClientVersion.Version != "v0.0.0-e2e" || info.ServerVersion != sandbox.KubeVersion {
		t.Fatalf("versions: client %q server %q", info.ClientVersion.Version, info.ServerVersion)
	}
	if len(info.Operators) != 1 || info.Operators[0].Version != "v1.1.1" {
		t.Fatalf("operators: %+v", info.Operators)
	}
	text := h.Kubectl("ray", "version")
	want := "Client Version: v0.0.0-e2e\nServer Version: v1.34.3\nKubeRay Operator: v1.1.1 (kuberay-system/kuberay-operator)\n"
	if text.Code != 0 || text.Stdout != want {
		t.Fatalf("text output:\n%s\nwant stdout:\n%s", text, want)
	}
}

// The sandbox CLI: up then down leaves no process and no port behind; a second sandbox beside the
// shared one does not collide; bad input gets one line and a non-zero exit.
func TestSandboxUpDownLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(env.work, "sandbox-cli")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/kubectl-ray/kubectl-ray/hack/sandbox").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir := filepath.Join(t.TempDir(), "sb")
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}

	stdout, stderr, code := run("up", "--dir", dir, "--operator", "v1.1.1", "--nodes", "1")
	if code != 0 || stdout != "export KUBECONFIG="+filepath.Join(dir, "kubeconfig")+"\n" {
		t.Fatalf("up: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	attached, err := sandbox.Attach(sandbox.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	pids, ports := attached.PIDs(), attached.Ports()
	if len(pids) != 6 {
		t.Fatalf("want 6 processes (etcd, apiserver, controller-manager, scheduler, kwok, operator), got %d", len(pids))
	}
	for name, p := range ports {
		if p == env.sb.Ports()[name] {
			t.Errorf("port %d for %s collides with the shared sandbox", p, name)
		}
	}
	// Up again in the same dir: refused while it runs.
	if _, stderr, code := run("up", "--dir", dir); code == 0 || !strings.Contains(stderr, "already up") {
		t.Errorf("second up: exit %d, stderr %q", code, stderr)
	}

	if _, stderr, code := run("down", "--dir", dir); code != 0 {
		t.Fatalf("down: exit %d: %s", code, stderr)
	}
	for _, pid := range pids {
		if processAlive(pid) {
			t.Errorf("process %d still runs after down", pid)
		}
	}
	for name, p := range ports {
		if portListening(p) {
			t.Errorf("port %d (%s) still listens after down", p, name)
		}
	}
	// Nothing up: one line naming the directory, a non-zero exit, nothing changed.
	if _, stderr, code := run("down", "--dir", dir); code == 0 || !strings.Contains(stderr, "nothing is up in "+dir) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("second down: exit %d, stderr %q", code, stderr)
	}
	// Bad input: one line, non-zero exit, nothing started.
	for _, args := range [][]string{{"up", "--dir", dir, "--operator", "v9"}, {"up", "--dir", dir, "--nodes", "-1"}, {"frobnicate"}} {
		_, stderr, code := run(args...)
		if code == 0 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: want one line and a non-zero exit, got exit %d: %q", args, code, stderr)
		}
	}
}

func podNames(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}
