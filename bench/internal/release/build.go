// Package release builds kubectl-ray for benchmarks the way .goreleaser.yaml builds what users
// install: CGO disabled, -trimpath, symbols stripped. A plain `go build` on a machine with a C
// compiler links with cgo instead, and its binary is another program to measure: 101 MB
// instead of 78, dynamically linked, and about 25 MiB more resident at start (kustomize, which
// cli-runtime's flags pull in, imports package plugin, and with cgo the linker then exports
// every symbol).
package release

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// Plugin is the package path of the binary.
const Plugin = "github.com/kubectl-ray/kubectl-ray/cmd/kubectl-ray"

// Build builds pkg (a package path or a directory relative to dir; dir "" is the current one)
// into out with the release settings.
func Build(ctx context.Context, dir, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}
