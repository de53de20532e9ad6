// Package e2e runs kubectl-ray, the real binary, against a real control plane (test/sandbox) with
// the real KubeRay operator. Where a kubelet or Ray would act, tests play it through the API
// (test/play) or a kwok Stage, and say so.
//
// One sandbox with KubeRay v1.1.1 starts in TestMain and is shared; each test works in its own
// namespace. Tests that need KubeRay v1.5.0 start a second sandbox once (sandboxV150).
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// env is the shared state every test reads.
var env struct {
	sb     *sandbox.Sandbox
	binDir string // holds kubectl-ray (and nothing else), for PATH-based plugin discovery
	bin    string
	work   string
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: skipped in -short mode")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	work, err := os.MkdirTemp("", "kubectl-ray-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env.work = work
	defer os.RemoveAll(work)
	if err := sandbox.Build(ctx, sandbox.Config{}, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	env.binDir = filepath.Join(work, "bin")
	env.bin = filepath.Join(env.binDir, "kubectl-ray")
	// Built as releases are (.goreleaser.yaml: CGO off, -trimpath), so the tests run what ships,
	// and make release-check's linux/amd64 build finds these packages already compiled.
	build := exec.Command("go", "build", "-trimpath", "-o", env.bin,
		"-ldflags", "-X github.com/kubectl-ray/kubectl-ray/pkg/version.Version=v0.0.0-e2e",
		"github.com/kubectl-ray/kubectl-ray/cmd/kubectl-ray")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building kubectl-ray:", err)
		return 1
	}
	sb, err := sandbox.Up(ctx, sandbox.Config{Dir: filepath.Join(work, "sandbox-v1.1.1"), Operator: sandbox.OperatorV111, DieWithParent: true}, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	env.sb = sb
	code := m.Run()
	stopExtraSandboxes()
	if err := sb.Down(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: down:", err)
	}
	return code
}
