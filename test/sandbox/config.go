// Package sandbox runs a real Kubernetes control plane on loopback for kubectl-ray's end-to-end
// tests, demo and benchmarks: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok
// (fake kubelets) and the real KubeRay operator, all built from Go modules (hack/sandbox/modules).
//
// What it cannot show: no container runs, so there is no Ray, no real kubelet and no node pressure.
// Tests play those parts through the API or kwok Stages, and say so where they do.
package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Pinned versions of everything the sandbox runs.
const (
	EtcdVersion       = "v3.7.3"
	KubeVersion       = "v1.37.2"
	KwokVersion       = "v0.8.0"
	OperatorV111      = "v1.1.1" // has the evicted-head bug (kuberay #2125)
	OperatorV150      = "v1.5.0" // fixed since v1.2.0 (kuberay PR #2217)
	OperatorV160      = "v1.6.0" // honours ray.io/disable-provisioned-head-restart (kuberay #4234)
	OperatorV170      = "v1.7.0" // RayService spec.suspend, incremental upgrade on by default; built from its archive where the proxy refuses it
	OperatorNone      = "none"
	DefaultOperator   = OperatorV111
	defaultCRDVersion = OperatorV150
)

// Operators are the operator versions the sandbox can run.
var Operators = []string{OperatorV111, OperatorV150, OperatorV160, OperatorV170}

// Config says where the sandbox lives and what it runs.
type Config struct {
	// Dir holds the state of one sandbox: data, logs, kubeconfig, pids. Two sandboxes with different
	// Dirs never collide (ports are picked free at start-up).
	Dir string
	// Cache holds the built binaries, keyed by version; shared by every sandbox.
	Cache string
	// Operator is one of Operators, or OperatorNone.
	Operator string
	// Build lists the operator versions Build makes (OperatorNone: none, only the CRDs); empty
	// means all of Operators. The demo builds only the version it runs, so an operator it does
	// not use never makes it wait.
	Build []string
	// Nodes is how many kwok-managed fake nodes to create.
	Nodes int
	// Repo is the kubectl-ray checkout, where hack/sandbox/modules lives.
	Repo string
	// DieWithParent kills the sandbox's processes when the creating process dies (tests); the CLI's
	// `up` leaves them running until `down`.
	DieWithParent bool
	// ServeNetwork gives the operator a pod network that reaches stand-ins for Ray the way it
	// reaches Ray in a cluster: HTTP_PROXY points at a small forward proxy in this process that
	// sends <svc>.<ns>.svc.cluster.local names (through the Service's EndpointSlices) and pod IPs
	// to the target of the pod's kwok PortForward object, always a loopback address. Go never
	// proxies loopback addresses, so the operator's API server connection stays direct; no pod
	// IP is ever dialled. The proxy lives in the process that called Up, so only in-process users
	// (tests, the demo) can turn it on; docs/sandbox.md.
	ServeNetwork bool
	// RealNode adds the machine's one real node (a kubelet on containerd and runc) beside the
	// kwok nodes: real containers, real evictions and OOM kills (realnode.go). Up fails with an
	// error wrapping ErrNoRealNode where this machine cannot run it, saying why in one line.
	RealNode bool
	// OperatorFeatureGates is the operator's --feature-gates ("" leaves its defaults): KubeRay
	// v1.7.0's NetworkPolicy controller, say, runs only with RayClusterNetworkPolicy=true.
	OperatorFeatureGates string
	// OperatorEnv is added to the operator's environment ("NAME=value"): some settings KubeRay
	// reads only from there (v1.7.0's RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS, say).
	OperatorEnv []string
}

// DefaultCache is $KUBECTL_RAY_SANDBOX_CACHE, else ~/.cache/kubectl-ray/sandbox: outside the
// checkout, so a fresh clone on the same machine reuses the binaries.
func DefaultCache() string {
	if c := os.Getenv("KUBECTL_RAY_SANDBOX_CACHE"); c != "" {
		return c
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "kubectl-ray", "sandbox")
	}
	return filepath.Join(os.TempDir(), "kubectl-ray-sandbox-cache")
}

// FindRepo walks up from dir to the kubectl-ray module root.
func FindRepo(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/kubectl-ray/kubectl-ray\n") {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("not inside the kubectl-ray checkout: run from the repository")
		}
		d = parent
	}
}

func (c *Config) defaults() error {
	if c.Cache == "" {
		c.Cache = DefaultCache()
	}
	if c.Operator == "" {
		c.Operator = DefaultOperator
	}
	if c.Nodes == 0 {
		c.Nodes = 3
	}
	if c.Nodes < 0 || c.Nodes > 500 {
		return fmt.Errorf("--nodes %d is out of range: use 0 to 500", c.Nodes)
	}
	if err := checkOperator(c.Operator); err != nil {
		return err
	}
	for _, v := range c.Build {
		if err := checkOperator(v); err != nil {
			return err
		}
	}
	if c.Repo == "" {
		wd, _ := os.Getwd()
		r, err := FindRepo(wd)
		if err != nil {
			return err
		}
		c.Repo = r
	}
	if c.Dir == "" {
		c.Dir = filepath.Join(c.Repo, ".sandbox", "default")
	}
	abs, err := filepath.Abs(c.Dir)
	if err != nil {
		return err
	}
	c.Dir = abs
	return nil
}

func checkOperator(v string) error {
	if v == OperatorNone {
		return nil
	}
	for _, known := range Operators {
		if v == known {
			return nil
		}
	}
	return fmt.Errorf("unknown operator version %q: use --operator %s|%s", v, strings.Join(Operators, "|"), OperatorNone)
}

// builds are the operator versions whose binaries Build makes, and crds those whose CRDs (and
// samples) it writes: an operator-less sandbox still needs the ray.io CRDs.
func (c Config) builds() (bins, crds []string) {
	want := c.Build
	if len(want) == 0 {
		want = Operators
	}
	seen := map[string]bool{}
	for _, v := range want {
		if v == OperatorNone {
			v = defaultCRDVersion
		} else if !seen["bin"+v] {
			seen["bin"+v] = true
			bins = append(bins, v)
		}
		if !seen[v] {
			seen[v] = true
			crds = append(crds, v)
		}
	}
	return bins, crds
}

// Paths of the built artefacts in the cache.
func (c Config) etcdBin() string { return filepath.Join(c.Cache, "etcd-"+EtcdVersion, "etcd") }
func (c Config) kubeBin(name string) string {
	return filepath.Join(c.Cache, "kube-"+KubeVersion, name)
}
func (c Config) kwokBin() string { return filepath.Join(c.Cache, "kwok-"+KwokVersion, "kwok") }
func (c Config) kwokStages() string {
	return filepath.Join(c.Cache, "kwok-"+KwokVersion, "stages.yaml")
}
func (c Config) kwokCRDs() string { return filepath.Join(c.Cache, "kwok-"+KwokVersion, "crds.yaml") }
func (c Config) operatorBin(v string) string {
	return filepath.Join(c.Cache, "kuberay-"+v, "ray-operator")
}
func (c Config) operatorCRDs(v string) string {
	return filepath.Join(c.Cache, "kuberay-"+v, "crds.yaml")
}

// realNodeCache holds the real node's CNI plugin, Ray stand-in and images, keyed by a hash of
// their sources: a change to the stand-in rebuilds its image instead of reusing a stale one.
func (c Config) realNodeCache() string {
	return filepath.Join(c.Cache, "realnode-"+KubeVersion+"-"+realNodeSourceStamp(c.Repo))
}

// realNodeSources are the files the real node's cached artefacts are made from.
var realNodeSources = []string{"test/play/cmd/ray", "test/sandbox/cmd/" + cniPluginName, "test/sandbox/realnode_images.go"}

// realNodeSourceStamp is the first 12 hex digits of a SHA-256 over those files' names and contents.
func realNodeSourceStamp(repo string) string {
	h := sha256.New()
	for _, src := range realNodeSources {
		files := []string{filepath.Join(repo, src)}
		if fi, err := os.Stat(files[0]); err == nil && fi.IsDir() {
			files, _ = filepath.Glob(filepath.Join(repo, src, "*.go"))
		}
		sort.Strings(files)
		for _, f := range files {
			b, _ := os.ReadFile(f)
			fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
func (c Config) cniPlugin() string  { return filepath.Join(c.realNodeCache(), cniPluginName) }
func (c Config) rayStandIn() string { return filepath.Join(c.realNodeCache(), "ray") }

// imageTar is one of the real node's image tarballs (realnode_images.go).
func (c Config) imageTar(name string) string { return filepath.Join(c.realNodeCache(), "images", name) }

// SamplePath is a KubeRay sample manifest from the ray-operator module (e.g. "ray-cluster.complete.yaml").
func (c Config) SamplePath(name string) string {
	return filepath.Join(c.Cache, "kuberay-"+OperatorV111, "samples", name)
}

// Kubeconfig is the sandbox's kubeconfig, with contexts sandbox (admin), sandbox-reader
// (read-only) and sandbox-no-nodes (read-only, cannot list nodes).
func (c Config) Kubeconfig() string { return filepath.Join(c.Dir, "kubeconfig") }
