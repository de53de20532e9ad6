package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// manifestDoc is the part of doctor -f's JSON these tests read.
type manifestDoc struct {
	Findings []struct {
		Rule     string
		Severity string
		Cluster  *struct{ Name string }
		Object   struct{ Kind, Name string }
		Field    string
		Source   *struct {
			File string
			Line int
		}
	}
	Manifests *struct {
		Files, Documents int
		Skipped          map[string]int
		Errors           []string
		Offline          bool
		OfflineReason    string
		NotRun           []string
	}
}

func parseManifestDoc(t *testing.T, res Result) manifestDoc {
	t.Helper()
	var d manifestDoc
	if err := json.Unmarshal([]byte(res.Stdout), &d); err != nil || d.Manifests == nil {
		t.Fatalf("doctor -f -o json: no manifests section (%v): %s", err, res)
	}
	return d
}

// has is "rule file:line field" for each finding, to compare against.
func (d manifestDoc) has(rule string) (string, bool) {
	for _, f := range d.Findings {
		if f.Rule == rule {
			at := ""
			if f.Source != nil {
				at = fmt.Sprintf("%s:%d", filepath.Base(f.Source.File), f.Source.Line)
			}
			return at + " " + f.Field, true
		}
	}
	return "", false
}

// unquoted is a RayService as KubeRay's docs advise for Serve (head num-cpus 0), written unquoted:
// a number where the CRD wants a string.
const unquoted = `apiVersion: v1
kind: ConfigMap
metadata:
  name: skipped
---
apiVersion: ray.io/v1
kind: RayService
metadata:
  name: unquoted
spec:
  rayClusterConfig:
    rayVersion: "2.9.0"
    headGroupSpec:
      rayStartParams:
        num-cpus: 0
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.9.0
`

// doctor -f on a manifest, offline and against the sandbox's KubeRay v1.1.1, then the manifest
// applied: the API server refuses what the finding predicted. Costs about 2 s.
func TestDoctorManifestBeforeApply(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "service.yaml")
	if err := os.WriteFile(file, []byte(unquoted), 0o644); err != nil {
		t.Fatal(err)
	}

	// Offline: a kubeconfig whose server is a loopback listener that counts connections; none
	// may come.
	var dials atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			c.Close()
		}
	}()
	counted := writeKubeconfig(t, dir, "https://"+ln.Addr().String())
	res := h.exec(env.bin, []string{"doctor", "-f", file, "--offline", "-o", "json", "--kubeconfig", counted}, nil)
	if res.Code != 1 {
		t.Fatalf("doctor -f --offline on a refused spec: want exit 1, got %s", res)
	}
	d := parseManifestDoc(t, res)
	if at, ok := d.has("manifest-start-param-not-string"); !ok || at != "service.yaml:15 spec.rayClusterConfig.headGroupSpec.rayStartParams.num-cpus" {
		t.Errorf("manifest-start-param-not-string at %q (found %v), want service.yaml:15 and the field", at, ok)
	}
	if !d.Manifests.Offline || d.Manifests.OfflineReason != "--offline" || d.Manifests.Skipped["ConfigMap"] != 1 || d.Manifests.Documents != 1 {
		t.Errorf("manifests section: %+v", *d.Manifests)
	}
	if _, ok := d.has("operator-outdated"); ok {
		t.Errorf("offline, yet the operator was judged")
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("doctor -f --offline made %d connections to the kubeconfig's server, want none", n)
	}

	// Against the sandbox: the operator that would run it is v1.1.1, which never replaces an
	// evicted head.
	d = parseManifestDoc(t, h.Run("doctor", "-f", file, "-o", "json"))
	if d.Manifests.Offline {
		t.Errorf("with the sandbox's kubeconfig doctor -f checked offline: %+v", *d.Manifests)
	}
	if _, ok := d.has("operator-outdated"); !ok {
		t.Errorf("doctor -f against KubeRay v1.1.1: no operator-outdated finding")
	}

	// Applied as it is: the API server refuses it, as the finding said.
	apply := h.Kubectl("create", "-n", h.NS, "-f", file)
	if apply.Code == 0 || !strings.Contains(apply.Stderr, "must be of type string") {
		t.Errorf("kubectl create of the unquoted start parameter: want the API server's refusal, got %s", apply)
	}

	// Through kubectl's plugin discovery, from stdin, as helm template | kubectl ray doctor -f -.
	res = h.kubectlStdin(unquoted, "ray", "doctor", "-f", "-", "--offline")
	if res.Code != 1 || !strings.Contains(res.Stdout, "at <stdin>:15 spec.rayClusterConfig.headGroupSpec.rayStartParams.num-cpus") ||
		!strings.Contains(res.Stdout, "Offline (--offline)") {
		t.Errorf("kubectl ray doctor -f -: %s", res)
	}
}

// Bad input to doctor -f: one line and exit 2 each; a file that does not parse leaves the others
// checked. No cluster is needed for any of it. Costs under 1 s.
func TestDoctorManifestBadInput(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	broken := write("broken.yaml", "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: b\n spec: {}\n")
	good := write("good.yaml", strings.SplitN(unquoted, "---\n", 2)[1])
	other := write("other.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")

	res := h.Run("doctor", "--offline", "-f", broken, "-f", good, "-o", "json")
	if res.Code != 2 || strings.Count(res.Stderr, "\n") != 1 || !strings.Contains(res.Stderr, "broken.yaml:5: not valid YAML") {
		t.Errorf("a file that does not parse beside a good one: want exit 2 and one line naming broken.yaml:5, got %s", res)
	}
	if d := parseManifestDoc(t, res); d.Manifests.Documents != 1 || len(d.Manifests.Errors) != 1 {
		t.Errorf("the good file was not checked beside the broken one: %+v", *d.Manifests)
	}
	// A mis-indented list item deep in a pod template: the line of the fault, not of its block.
	misindented := write("misindented.yaml", "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: m\nspec:\n  headGroupSpec:\n"+
		"    rayStartParams: {}\n    template:\n      spec:\n        containers:\n        - name: ray-head\n"+
		"          image: rayproject/ray:2.52.0\n          ports:\n         - containerPort: 6379\n")
	wantOneLineError(t, h.Run("doctor", "--offline", "-f", misindented), 2, "misindented.yaml:14: not valid YAML")
	wantOneLineError(t, h.Run("doctor", "--offline", "-f", other), 2, "no RayCluster, RayService or RayJob", "1 other documents skipped")
	wantOneLineError(t, h.Run("doctor", "--offline", "-f", filepath.Join(dir, "absent.yaml")), 2, "absent.yaml does not exist")
	wantOneLineError(t, h.Run("doctor", "--offline", "-f", good, "-A"), 2, "-A and -l do not apply")
	wantOneLineError(t, h.Run("doctor", "--offline", "-f", good, "raycluster/x"), 2, "drop the NAME")
	wantOneLineError(t, h.Run("doctor", "--offline"), 2, "--offline checks files")
	wantOneLineError(t, h.Run("doctor", "-R"), 2, "-R reads directories named by -f")
	wantOneLineError(t, h.Run("doctor", "--offline", "-f", good, "--watch"), 2, "drop --watch")
	wantOneLineError(t, h.Run("doctor", "--offline", "-f", good, "--ray"), 2, "drop --ray")
	empty := filepath.Join(dir, "empty")
	if err := os.MkdirAll(filepath.Join(empty, "below"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantOneLineError(t, h.Run("doctor", "--offline", "-f", empty), 2, "has no .yaml, .yml or .json file", "add -R")

	// A kubeconfig whose server does not answer: checked offline, said once on stderr.
	dead := writeKubeconfig(t, dir, "https://127.0.0.1:9")
	res = h.exec(env.bin, []string{"doctor", "-f", good, "--kubeconfig", dead, "--fail-on", "never"}, nil)
	if res.Code != 0 || !strings.HasPrefix(res.Stderr, "warning: checking offline") || strings.Count(res.Stderr, "\n") != 1 {
		t.Errorf("doctor -f with an unreachable cluster: want exit 0 and one warning line, got %s", res)
	}
}

// writeKubeconfig writes a kubeconfig of one context whose server is server.
func writeKubeconfig(t *testing.T, dir, server string) string {
	t.Helper()
	p := filepath.Join(dir, "kubeconfig-"+strings.NewReplacer(":", "-", "/", "-").Replace(server))
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "` + server + `", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: e2e}
contexts:
- name: c
  context: {cluster: c, user: u, namespace: files}
current-context: c
`
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// kubectlStdin is Kubectl with stdin.
func (h *H) kubectlStdin(stdin string, args ...string) Result {
	h.T.Helper()
	ctx, cancel := context.WithTimeout(h.Ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", args...)
	cmd.Env = append(os.Environ(), "PATH="+env.binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+h.SB.Kubeconfig())
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		res.Code = ee.ExitCode()
	} else if err != nil {
		h.T.Fatalf("kubectl %v: %v", args, err)
	}
	return res
}
