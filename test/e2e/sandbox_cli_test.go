package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

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
