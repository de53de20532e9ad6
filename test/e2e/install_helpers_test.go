package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// pluginPath is a PATH of exactly dirs, then the directories of kubectl and the shell tools, so no
// plugin from the machine (or env.binDir) takes part in kubectl's plugin discovery.
func pluginPath(t *testing.T, dirs ...string) string {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(append(dirs, filepath.Dir(kubectl), "/usr/bin", "/bin"), string(os.PathListSeparator))
}

// pluginKubectl runs the real kubectl with PATH set to path (from pluginPath).
func (h *H) pluginKubectl(path string, args ...string) Result {
	h.T.Helper()
	return h.exec("kubectl", args, []string{"PATH=" + path, "KUBECONFIG=" + h.SB.Kubeconfig()})
}

// pluginInstall runs `make install`'s script with the e2e binary into prefix, under PATH path.
func (h *H) pluginInstall(prefix, path string) Result {
	h.T.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "hack", "release", "install.sh"))
	if err != nil {
		h.T.Fatal(err)
	}
	res := h.exec(script, []string{env.bin, prefix}, []string{"PATH=" + path})
	if res.Code != 0 {
		h.T.Fatalf("install.sh: %s", res)
	}
	return res
}

// pluginStandIn writes a kubectl-ray script that plays KubeRay's plugin: it prints its name and args.
func pluginStandIn(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "kubectl-ray")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho \"kuberay-stand-in $(basename \"$0\") $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// pluginCreateRayService creates KubeRay's ray-service.sample.yaml as name.
func (h *H) pluginCreateRayService(name string) {
	h.T.Helper()
	data, err := os.ReadFile(h.SB.Config().SamplePath("ray-service.sample.yaml"))
	if err != nil {
		h.T.Fatal(err)
	}
	svc := &rayv1.RayService{}
	if err := yaml.Unmarshal(data, svc); err != nil {
		h.T.Fatal(err)
	}
	svc.Name, svc.Namespace = name, h.NS
	if _, err := h.Ray.RayV1().RayServices(h.NS).Create(h.Ctx, svc, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
}

// pluginLink reports whether p is a symlink to target.
func pluginLink(p, target string) bool {
	got, err := os.Readlink(p)
	return err == nil && got == target
}
