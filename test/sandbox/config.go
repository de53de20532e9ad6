// Package sandbox runs a real Kubernetes control plane on loopback for kubectl-ray's end-to-end
// tests, demo and benchmarks: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok
// (fake kubelets) and the real KubeRay operator, all built from Go modules (hack/sandbox/modules).
//
// What it cannot show: no container runs, so there is no Ray, no real kubelet and no node pressure.
// Tests play those parts through the API or kwok Stages, and say so where they do.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Pinned versions of everything the sandbox runs.
const (
	EtcdVersion       = "v3.6.16"
	KubeVersion       = "v1.34.3"
	KwokVersion       = "v0.8.0"
	OperatorV111      = "v1.1.1" // has the evicted-head bug (kuberay #2125)
	OperatorV150      = "v1.5.0" // fixed since v1.2.0 (kuberay PR #2217)
	OperatorNone      = "none"
	DefaultOperator   = OperatorV111
	defaultCRDVersion = OperatorV150
)

// Operators are the operator versions the sandbox can run.
var Operators = []string{OperatorV111, OperatorV150}

// Config says where the sandbox lives and what it runs.
type Config struct {
	// Dir holds the state of one sandbox: data, logs, kubeconfig, pids. Two sandboxes with different
	// Dirs never collide (ports are picked free at start-up).
	Dir string
	// Cache holds the built binaries, keyed by version; shared by every sandbox.
	Cache string
	// Operator is OperatorV111, OperatorV150 or OperatorNone.
	Operator string
	// Nodes is how many kwok-managed fake nodes to create.
	Nodes int
	// Repo is the kubectl-ray checkout, where hack/sandbox/modules lives.
	Repo string
	// DieWithParent kills the sandbox's processes when the creating process dies (tests); the CLI's
	// `up` leaves them running until `down`.
	DieWithParent bool
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
	switch c.Operator {
	case OperatorV111, OperatorV150, OperatorNone:
	default:
		return fmt.Errorf("unknown operator version %q: use --operator %s|%s|%s", c.Operator, OperatorV111, OperatorV150, OperatorNone)
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

// SamplePath is a KubeRay sample manifest from the ray-operator module (e.g. "ray-cluster.complete.yaml").
func (c Config) SamplePath(name string) string {
	return filepath.Join(c.Cache, "kuberay-"+OperatorV111, "samples", name)
}

// Kubeconfig is the sandbox's kubeconfig, with contexts sandbox (admin), sandbox-reader
// (read-only) and sandbox-no-nodes (read-only, cannot list nodes).
func (c Config) Kubeconfig() string { return filepath.Join(c.Dir, "kubeconfig") }
