package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmd/docs"
)

// docs/try-it.md's sh blocks, run as written by bash on the sandbox (KubeRay v1.1.1) with the
// plugin on PATH: the played eviction is found by doctor and healed by heal, and the stand-in
// Serve proxy answers through kwok's port-forward.
func TestTryItDocs(t *testing.T) {
	for _, tool := range []string{"bash", "kubectl", "python3", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("docs/try-it.md needs %s: %v", tool, err)
		}
	}
	h := NewH(t)
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "try-it.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The page's heal keeps its evidence under ./kubectl-ray-evidence, as a user's would: in a
	// directory of the test's, not the checkout.
	script := []string{"set -euo pipefail", "cd " + t.TempDir()}
	for _, b := range docs.CodeBlocks(string(md)) {
		if b.Lang == "sh" {
			script = append(script, b.Text)
		}
	}
	if len(script) != 5 {
		t.Fatalf("want the page's 3 sh blocks, found %d", len(script)-2)
	}
	path := env.binDir + string(os.PathListSeparator) + os.Getenv("PATH")
	res := h.exec("bash", []string{"-c", strings.Join(script, "\n")}, []string{"PATH=" + path, "KUBECONFIG=" + h.SB.Kubeconfig()})
	t.Logf("try-it.md:\n%s", res)
	if res.Code != 0 {
		t.Fatalf("the page's commands failed: %s", res)
	}
	wantContains(t, "output", res.Stdout, "head-evicted", "KubeRay v1.1.1 will not replace it", "deleted pod try/",
		"RayCluster try/raycluster-complete: new head ")
	if lines := strings.Split(strings.TrimSpace(res.Stdout), "\n"); lines[len(lines)-1] != "200" {
		t.Errorf("the stand-in did not answer 200 through the port-forward: %q", lines[len(lines)-1])
	}
}
