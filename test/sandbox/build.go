package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// part is one artefact of the build: made by make, present when all of outputs exist.
type part struct {
	name    string
	outputs []string
	make    func(ctx context.Context) error
}

// Build makes the binaries and manifests the sandbox needs, into the cache: the control plane,
// kwok, and the KubeRay operators cfg.Build names (all when empty). Idempotent: a part
// whose outputs exist is skipped, so a warm run does nothing. A cold run takes many minutes
// (kube-apiserver alone compiles for about 7 minutes on 2 cores); progress goes to w.
func Build(ctx context.Context, cfg Config, w io.Writer) error {
	if err := cfg.defaults(); err != nil {
		return err
	}
	if err := need("go", "install Go 1.26 or newer"); err != nil {
		return err
	}
	if err := need("kubectl", "install kubectl (used for `kubectl kustomize` of kwok's stages and for plugin discovery)"); err != nil {
		return err
	}
	b := &builder{cfg: cfg, modules: filepath.Join(cfg.Repo, "hack", "sandbox", "modules")}
	parts := []part{
		{"etcd " + EtcdVersion, []string{cfg.etcdBin()}, func(ctx context.Context) error {
			return b.goBuild(ctx, "etcd", ".", cfg.etcdBin())
		}},
		{"kube-apiserver " + KubeVersion, []string{cfg.kubeBin("kube-apiserver")}, func(ctx context.Context) error {
			return b.goBuild(ctx, "kube", "k8s.io/kubernetes/cmd/kube-apiserver", cfg.kubeBin("kube-apiserver"), kubeVersionFlags...)
		}},
		{"kube-controller-manager " + KubeVersion, []string{cfg.kubeBin("kube-controller-manager")}, func(ctx context.Context) error {
			return b.goBuild(ctx, "kube", "k8s.io/kubernetes/cmd/kube-controller-manager", cfg.kubeBin("kube-controller-manager"), kubeVersionFlags...)
		}},
		{"kube-scheduler " + KubeVersion, []string{cfg.kubeBin("kube-scheduler")}, func(ctx context.Context) error {
			return b.goBuild(ctx, "kube", "k8s.io/kubernetes/cmd/kube-scheduler", cfg.kubeBin("kube-scheduler"), kubeVersionFlags...)
		}},
		{"kwok " + KwokVersion, []string{cfg.kwokBin()}, func(ctx context.Context) error {
			return b.goBuild(ctx, "kwok", "sigs.k8s.io/kwok/cmd/kwok", cfg.kwokBin())
		}},
		{"kwok stages and CRDs " + KwokVersion, []string{cfg.kwokStages(), cfg.kwokCRDs()}, b.kwokManifests},
	}
	bins, crds := cfg.builds()
	for _, v := range bins {
		v := v
		parts = append(parts, part{"KubeRay operator " + v, []string{cfg.operatorBin(v)}, func(ctx context.Context) error {
			return b.buildOperator(ctx, v, cfg.operatorBin(v))
		}})
	}
	for _, v := range crds {
		v := v
		parts = append(parts, part{"KubeRay CRDs and samples " + v, []string{cfg.operatorCRDs(v)}, func(ctx context.Context) error {
			return b.kuberayManifests(ctx, v)
		}})
	}
	parts = append(parts, b.realNodeParts(w)...)
	var todo []part
	for _, p := range parts {
		if !allExist(p.outputs) {
			todo = append(todo, p)
		}
	}
	if len(todo) == 0 {
		fmt.Fprintf(w, "sandbox build: all %d parts cached in %s\n", len(parts), cfg.Cache)
		return nil
	}
	start := time.Now()
	fmt.Fprintf(w, "sandbox build: %d of %d parts to build into %s (cold, everything: over 10 minutes on 2 cores; see README)\n", len(todo), len(parts), cfg.Cache)
	for i, p := range todo {
		t := time.Now()
		fmt.Fprintf(w, "sandbox build: [%d/%d] %s ...\n", i+1, len(todo), p.name)
		if err := p.make(ctx); err != nil {
			return fmt.Errorf("building %s failed: %w", p.name, err)
		}
		fmt.Fprintf(w, "sandbox build: [%d/%d] %s done in %s (total %s)\n", i+1, len(todo), p.name, since(t), since(start))
	}
	return nil
}

// realNodeParts are the real node's: the kubelet, the CNI plugin, the Ray stand-in and the
// images. They are built as root only, after apt-get installed the host packages they need;
// elsewhere Build says in one line that the real node is left out.
func (b *builder) realNodeParts(w io.Writer) []part {
	if err := ensureHostPackages(func(f string, a ...any) { fmt.Fprintf(w, "sandbox build: "+f+"\n", a...) }); err != nil {
		fmt.Fprintf(w, "sandbox build: the real node is left out: %v\n", err)
		return nil
	}
	if err := RealNodeUnavailable(); err != nil {
		fmt.Fprintf(w, "sandbox build: the real node is left out: %v\n", err)
		return nil
	}
	cfg := b.cfg
	return []part{
		{"kubelet " + KubeVersion, []string{cfg.kubeBin("kubelet")}, func(ctx context.Context) error {
			return b.goBuild(ctx, "kube", "k8s.io/kubernetes/cmd/kubelet", cfg.kubeBin("kubelet"), kubeVersionFlags...)
		}},
		{"real node CNI plugin and Ray stand-in", []string{cfg.cniPlugin(), cfg.rayStandIn()}, func(ctx context.Context) error {
			if err := b.repoBuild(ctx, "./test/sandbox/cmd/"+cniPluginName, cfg.cniPlugin()); err != nil {
				return err
			}
			return b.repoBuild(ctx, "./test/play/cmd/ray", cfg.rayStandIn())
		}},
		{"real node images (pause, busybox, Ray stand-in)", []string{cfg.imageTar("pause.tar"), cfg.imageTar("busybox.tar"), cfg.imageTar("ray.tar")}, func(ctx context.Context) error {
			if err := os.MkdirAll(filepath.Dir(cfg.imageTar("ray.tar")), 0o755); err != nil {
				return err
			}
			return realImages(filepath.Dir(cfg.imageTar("ray.tar")), cfg.rayStandIn())
		}},
	}
}

// repoBuild builds a static binary of this repository (the real node's helpers run inside
// containers and as CNI plugins, where no libc of this machine is promised).
func (b *builder) repoBuild(ctx context.Context, pkg, out string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp := out + ".tmp"
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", tmp, pkg)
	cmd.Dir = b.cfg.Repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("go build %s: %v: %s", pkg, err, lastLines(string(out), 5))
	}
	return os.Rename(tmp, out)
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Second) }

// kubeVersionFlags stamp the control plane with its release, as Kubernetes' own build does;
// without them the API server reports v0.0.0-master.
var kubeVersionFlags = []string{
	"-X k8s.io/component-base/version.gitVersion=" + KubeVersion,
	"-X k8s.io/component-base/version.gitMajor=1",
	"-X k8s.io/component-base/version.gitMinor=" + strings.Split(KubeVersion, ".")[1],
	"-X k8s.io/component-base/version.gitTreeState=clean",
}

type builder struct {
	cfg     Config
	modules string
}

// goBuild builds pkg inside the wrapper module dir into out, atomically: a failed or interrupted
// build never leaves a half-written binary that a later run would take as cached.
func (b *builder) goBuild(ctx context.Context, module, pkg, out string, ldflags ...string) error {
	var flags []string
	if len(ldflags) > 0 {
		flags = []string{"-ldflags", strings.Join(ldflags, " ")}
	}
	return goBuildIn(ctx, filepath.Join(b.modules, module), pkg, out, flags...)
}

// moduleDir is the module cache directory of a module the wrapper module requires.
func (b *builder) moduleDir(ctx context.Context, module, path string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-json", path)
	cmd.Dir = filepath.Join(b.modules, module)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %v", path, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", err
	}
	if m.Dir == "" {
		// Not downloaded yet: download it and ask again.
		dl := exec.CommandContext(ctx, "go", "mod", "download", path)
		dl.Dir = cmd.Dir
		if out, err := dl.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go mod download %s: %v: %s", path, err, out)
		}
		return b.moduleDir(ctx, module, path)
	}
	return m.Dir, nil
}

// kwokManifests writes kwok's "fast" stages (node initialise, heartbeat with lease, pod ready,
// complete, delete) and its CRDs, so tests can add Stages and PortForwards through the API.
func (b *builder) kwokManifests(ctx context.Context) error {
	dir, err := b.moduleDir(ctx, "kwok", "sigs.k8s.io/kwok")
	if err != nil {
		return err
	}
	stages, err := exec.CommandContext(ctx, "kubectl", "kustomize", filepath.Join(dir, "kustomize", "stage", "fast")).Output()
	if err != nil {
		return fmt.Errorf("kubectl kustomize of kwok's fast stages: %v", err)
	}
	crds, err := concatYAML(filepath.Join(dir, "kustomize", "crd", "bases"))
	if err != nil {
		return err
	}
	if err := writeAtomic(b.cfg.kwokCRDs(), crds); err != nil {
		return err
	}
	return writeAtomic(b.cfg.kwokStages(), stages)
}

// kuberayManifests writes the ray.io CRDs of operator version v, and for v1.1.1 KubeRay's samples.
func (b *builder) kuberayManifests(ctx context.Context, v string) error {
	dir, _, err := b.operatorSource(ctx, v)
	if err != nil {
		return err
	}
	if v == OperatorV111 {
		samples := filepath.Join(filepath.Dir(b.cfg.operatorCRDs(v)), "samples")
		if err := os.MkdirAll(samples, 0o755); err != nil {
			return err
		}
		files, _ := filepath.Glob(filepath.Join(dir, "config", "samples", "*.yaml"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if err := writeAtomic(filepath.Join(samples, filepath.Base(f)), data); err != nil {
				return err
			}
		}
	}
	crds, err := concatYAML(filepath.Join(dir, "config", "crd", "bases"))
	if err != nil {
		return err
	}
	return writeAtomic(b.cfg.operatorCRDs(v), crds)
}

func concatYAML(dir string) ([]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no YAML files in %s", dir)
	}
	sort.Strings(files)
	var buf bytes.Buffer
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		buf.WriteString("---\n")
		buf.Write(data)
		buf.WriteString("\n")
	}
	return buf.Bytes(), nil
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func allExist(paths []string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

func need(bin, fix string) error {
	if _, err := exec.LookPath(bin); err != nil {
		return fmt.Errorf("%s is not on PATH: %s", bin, fix)
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// OperatorSample returns the path of KubeRay's sample manifest name (e.g.
// "ray-service.sample.yaml") in the ray-operator module of version v, the one whose CRDs and
// binary that sandbox runs (the cached samples are v1.1.1's).
func (c Config) OperatorSample(ctx context.Context, v, name string) (string, error) {
	if err := c.defaults(); err != nil {
		return "", err
	}
	b := &builder{cfg: c, modules: filepath.Join(c.Repo, "hack", "sandbox", "modules")}
	dir, _, err := b.operatorSource(ctx, v)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "config", "samples", name), nil
}
