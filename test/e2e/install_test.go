package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// `make install` beside KubeRay's own kubectl-ray, through kubectl's real plugin discovery. KubeRay's
// plugin is played by a script that prints its name (it is not installed here); kubectl is real.
func TestInstallBesideKubeRayPlugin(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("ship", nil)
	dir := t.TempDir()
	prefix := filepath.Join(dir, "prefix")
	kuberay := filepath.Join(dir, "kuberay")

	// doctorReachesOurs runs `kubectl ray doctor` and checks the answer is ours: doctor's JSON
	// with the cluster, and a missing cluster is exit 5 (a stand-in would print its name, exit 0).
	doctorReachesOurs := func(path string) {
		t.Helper()
		res := h.pluginKubectl(path, "ray", "doctor", "-n", h.NS, "--fail-on", "never", "-o", "json")
		var doc struct {
			Kind     string
			Clusters []struct{ Name string }
		}
		if res.Code != 0 || json.Unmarshal([]byte(res.Stdout), &doc) != nil || len(doc.Clusters) != 1 || doc.Clusters[0].Name != "ship" {
			t.Fatalf("kubectl ray doctor did not reach kubectl-ray's doctor: %s", res)
		}
		if res := h.pluginKubectl(path, "ray", "doctor", "raycluster/absent", "-n", h.NS); res.Code != 5 || !strings.Contains(res.Stderr, `"absent"`) {
			t.Fatalf("kubectl ray doctor raycluster/absent: want exit 5 naming it: %s", res)
		}
	}

	t.Run("only ours", func(t *testing.T) {
		path := pluginPath(t, prefix)
		h.pluginInstall(prefix, path)
		for _, name := range []string{"kubectl-ray", "kubectl-ray-doctor", "kubectl-ray-heal", "kubectl-ray-chaos", "kubectl-ray-bundle",
			"kubectl_complete-ray", "kubectl_complete-ray-bundle", "kubectl_complete-ray-doctor", "kubectl_complete-ray_ops"} {
			if !pluginLink(filepath.Join(prefix, name), "kubectl-ray_ops") {
				t.Errorf("%s is not a link to kubectl-ray_ops", name)
			}
		}
		doctorReachesOurs(path)
		for _, plugin := range []string{"ray", "ray-ops"} {
			if res := h.pluginKubectl(path, plugin, "version", "--client"); res.Code != 0 || res.Stdout != "Client Version: v0.0.0-e2e\n" {
				t.Errorf("kubectl %s version --client: %s", plugin, res)
			}
		}
		if res := h.pluginKubectl(path, "ray-ops", "doctor", "--help"); res.Code != 0 || !strings.Contains(res.Stdout, "kubectl ray-ops doctor [NAME") {
			t.Errorf("kubectl ray-ops doctor --help does not name itself kubectl ray-ops: %s", res)
		}
	})

	// KubeRay's plugin installed later, earlier on PATH: installing again removes our kubectl-ray
	// link, so kubectl ray get reaches KubeRay's while kubectl ray doctor still reaches ours.
	t.Run("KubeRay's kubectl-ray earlier on PATH", func(t *testing.T) {
		pluginStandIn(t, kuberay)
		path := pluginPath(t, kuberay, prefix)
		res := h.pluginInstall(prefix, path)
		if !strings.Contains(res.Stdout, "removed   "+filepath.Join(prefix, "kubectl-ray")) {
			t.Errorf("install did not say it removed its kubectl-ray link: %s", res)
		}
		for _, gone := range []string{"kubectl-ray", "kubectl_complete-ray"} {
			if _, err := os.Lstat(filepath.Join(prefix, gone)); !os.IsNotExist(err) {
				t.Errorf("%s still installed beside KubeRay's plugin (err=%v)", gone, err)
			}
		}
		if res := h.pluginKubectl(path, "ray", "get", "cluster"); res.Code != 0 || res.Stdout != "kuberay-stand-in kubectl-ray get cluster\n" {
			t.Fatalf("kubectl ray get did not reach KubeRay's plugin: %s", res)
		}
		// version is KubeRay's too: ours does not shadow a command KubeRay's plugin has.
		if res := h.pluginKubectl(path, "ray", "version"); res.Stdout != "kuberay-stand-in kubectl-ray version\n" {
			t.Errorf("kubectl ray version: %s", res)
		}
		doctorReachesOurs(path)
		if res := h.pluginKubectl(path, "ray", "chaos", "--help"); res.Code != 0 || !strings.Contains(res.Stdout, "kubectl ray chaos [command]") {
			t.Errorf("kubectl ray chaos did not reach ours: %s", res)
		}
		if res := h.pluginKubectl(path, "ray", "heal", "--help"); res.Code != 0 || !strings.Contains(res.Stdout, "kubectl ray heal [NAME") {
			t.Errorf("kubectl ray heal did not reach ours: %s", res)
		}
		if res := h.pluginKubectl(path, "ray", "bundle", "--help"); res.Code != 0 || !strings.Contains(res.Stdout, "kubectl ray bundle [NAME") {
			t.Errorf("kubectl ray bundle did not reach ours: %s", res)
		}
	})

	// KubeRay's kubectl-ray in the install directory itself: never overwritten.
	t.Run("KubeRay's kubectl-ray in PREFIX", func(t *testing.T) {
		other := filepath.Join(dir, "other")
		standIn := pluginStandIn(t, other)
		before, _ := os.ReadFile(standIn)
		path := pluginPath(t, other)
		res := h.pluginInstall(other, path)
		if !strings.Contains(res.Stdout, "run "+standIn+" (KubeRay's, left alone)") {
			t.Errorf("install did not say it left KubeRay's kubectl-ray alone: %s", res)
		}
		after, _ := os.ReadFile(standIn)
		if fi, err := os.Lstat(standIn); err != nil || fi.Mode()&os.ModeSymlink != 0 || string(after) != string(before) {
			t.Fatalf("KubeRay's kubectl-ray was changed (err=%v)", err)
		}
		if res := h.pluginKubectl(path, "ray", "get", "cluster"); res.Stdout != "kuberay-stand-in kubectl-ray get cluster\n" {
			t.Fatalf("kubectl ray get: %s", res)
		}
		doctorReachesOurs(path)
	})
}

// Dynamic completion of RayCluster and RayService names from the sandbox: cobra's __complete on
// the binary, and kubectl's own plugin completion (kubectl >= 1.26 runs kubectl_complete-<plugin>),
// in both install layouts.
func TestCompletionListsSandboxNames(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("alpha", nil)
	h.CreateRayCluster("beta", nil)
	h.pluginCreateRayService("svc")

	const noFiles = ":4\n" // cobra.ShellCompDirectiveNoFileComp
	direct := func(args ...string) Result {
		t.Helper()
		return h.RunRaw(append([]string{"__complete", "doctor", "-n", h.NS}, args...)...)
	}
	if res := direct("a"); res.Code != 0 || res.Stdout != "alpha\n"+noFiles {
		t.Errorf("__complete doctor a: %s", res)
	}
	if res := direct("rayservice/"); res.Code != 0 || res.Stdout != "rayservice/svc\n"+noFiles {
		t.Errorf("__complete doctor rayservice/: %s", res)
	}
	all := direct("")
	for _, want := range []string{"alpha", "raycluster/alpha", "beta", "raycluster/beta", "rayservice/svc"} {
		if !strings.Contains("\n"+all.Stdout, "\n"+want+"\n") {
			t.Errorf("__complete doctor '': no %q in %s", want, all)
		}
	}
	// The other commands that take a cluster complete it the same way: head-kill also takes
	// rayservice/NAME; heal and the pressure commands take RayClusters only.
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"chaos", "head-kill"}, "rayservice/svc\n"},
		{[]string{"chaos", "disk-pressure"}, "alpha\n"},
		{[]string{"chaos", "memory-pressure"}, "beta\n"},
		{[]string{"heal"}, "alpha\n"},
	} {
		prefix := strings.TrimSuffix(c.want, "\n")
		args := append(append([]string{"__complete"}, c.cmd...), "-n", h.NS, prefix)
		if res := h.RunRaw(args...); res.Code != 0 || res.Stdout != c.want+noFiles {
			t.Errorf("__complete %v %q: %s", c.cmd, prefix, res)
		}
	}

	dir := t.TempDir()
	prefix := filepath.Join(dir, "prefix")
	kuberay := filepath.Join(dir, "kuberay")
	h.pluginInstall(prefix, pluginPath(t, prefix))
	pluginStandIn(t, kuberay)
	for name, path := range map[string]string{"only ours": pluginPath(t, prefix), "beside KubeRay's": pluginPath(t, kuberay, prefix)} {
		if name != "only ours" {
			h.pluginInstall(prefix, path)
		}
		for _, plugin := range []string{"ray", "ray-ops"} {
			res := h.pluginKubectl(path, "__complete", plugin, "doctor", "-n", h.NS, "b")
			if res.Code != 0 || res.Stdout != "beta\n"+noFiles {
				t.Errorf("%s: kubectl __complete %s doctor -n NS b: %s", name, plugin, res)
			}
		}
	}

	// The shells' scripts: cobra's, for the binary on PATH as kubectl-ray.
	for shell, marker := range map[string]string{
		"bash": "__start_kubectl-ray", "zsh": "#compdef kubectl-ray", "fish": "complete -c kubectl-ray",
		"powershell": "Register-ArgumentCompleter -CommandName 'kubectl-ray'",
	} {
		res := h.RunRaw("completion", shell)
		if res.Code != 0 || !strings.Contains(res.Stdout, marker) {
			t.Errorf("completion %s: no %q: exit %d, stderr %s", shell, marker, res.Code, res.Stderr)
		}
	}
	// bash runs the script for real: the completion function calls the binary, which lists the
	// sandbox's clusters. bash-completion's _get_comp_words_by_ref (a distro package, absent here)
	// is played by four assignments from bash's own COMP_WORDS.
	script := `_get_comp_words_by_ref() { cur="${COMP_WORDS[COMP_CWORD]}"; prev="${COMP_WORDS[COMP_CWORD-1]}"; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
source <(kubectl-ray completion bash)
COMP_WORDS=(kubectl-ray doctor -n "$NS" b); COMP_CWORD=4
__start_kubectl-ray 2>/dev/null
printf '%s\n' "${COMPREPLY[@]}"`
	res := h.exec("bash", []string{"-c", script}, []string{"PATH=" + env.binDir + ":/usr/bin:/bin", "NS=" + h.NS, "KUBECONFIG=" + h.SB.Kubeconfig()})
	if res.Code != 0 || res.Stdout != "beta\n" {
		t.Errorf("bash completion of kubectl-ray doctor -n NS b: %s", res)
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
	want := "Client Version: v0.0.0-e2e\nServer Version: " + sandbox.KubeVersion + "\nKubeRay Operator: v1.1.1 (kuberay-system/kuberay-operator)\n"
	if text.Code != 0 || text.Stdout != want {
		t.Fatalf("text output:\n%s\nwant stdout:\n%s", text, want)
	}
}
