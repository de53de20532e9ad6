package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayclient "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// H is one test's handle on a sandbox: its own namespace, clients, and the binary.
type H struct {
	T    *testing.T
	SB   *sandbox.Sandbox
	NS   string
	Kube kubernetes.Interface
	Ray  rayclient.Interface
	Ctx  context.Context
}

// NewH gives the test a fresh namespace in the shared KubeRay v1.1.1 sandbox.
func NewH(t *testing.T) *H { return newHOn(t, env.sb) }

func newHOn(t *testing.T, sb *sandbox.Sandbox) *H {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	ray, err := rayclient.NewForConfig(sb.Admin)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.ToLower(t.Name())
	name = strings.NewReplacer("/", "-", "_", "-").Replace(name)
	if len(name) > 40 {
		name = name[:40]
	}
	ns := fmt.Sprintf("%s-%04d", strings.Trim(name, "-"), rand.Intn(10000))
	if _, err := sb.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h := &H{T: t, SB: sb, NS: ns, Kube: sb.Kube, Ray: ray, Ctx: ctx}
	t.Cleanup(func() {
		if t.Failed() {
			h.dumpState()
		}
		// Namespaces are left to the sandbox's teardown: deleting one per test costs the
		// namespace controller's time and changes nothing that later tests see.
	})
	return h
}

// Result is one run of a command.
type Result struct {
	Stdout, Stderr string
	Code           int
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.Code, r.Stdout, r.Stderr)
}

// Run runs the real kubectl-ray binary against the sandbox, in the test's namespace unless args
// say otherwise. Color is off unless env asks for it; stdin is empty (not a terminal).
func (h *H) Run(args ...string) Result {
	h.T.Helper()
	return h.RunEnv(nil, args...)
}

// RunEnv is Run with extra environment variables.
func (h *H) RunEnv(extraEnv []string, args ...string) Result {
	h.T.Helper()
	full := append([]string{"--kubeconfig", h.SB.Kubeconfig()}, args...)
	if !hasNamespaceFlag(args) {
		full = append(full, "-n", h.NS)
	}
	return h.exec(env.bin, h.evidenceOff(full), extraEnv)
}

// RunRaw runs the binary with exactly args and the sandbox's KUBECONFIG in the environment.
func (h *H) RunRaw(args ...string) Result {
	h.T.Helper()
	return h.exec(env.bin, args, []string{"KUBECONFIG=" + h.SB.Kubeconfig()})
}

// Kubectl runs the real kubectl with the plugin's directory first on PATH, so `kubectl ray ...`
// goes through kubectl's plugin discovery.
func (h *H) Kubectl(args ...string) Result {
	h.T.Helper()
	return h.KubectlWithPath(env.binDir, args...)
}

// KubectlWithPath runs kubectl with dir prepended to PATH.
func (h *H) KubectlWithPath(dir string, args ...string) Result {
	h.T.Helper()
	path := dir + string(os.PathListSeparator) + os.Getenv("PATH")
	return h.exec("kubectl", args, []string{"PATH=" + path, "KUBECONFIG=" + h.SB.Kubeconfig()})
}

func (h *H) exec(bin string, args, extraEnv []string) Result {
	h.T.Helper()
	ctx, cancel := context.WithTimeout(h.Ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), extraEnv...)
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	case err != nil:
		h.T.Fatalf("running %s %v: %v", bin, args, err)
	}
	return res
}

// evidenceOff makes a heal keep no evidence unless args say where to keep it: by default heal
// writes it under ./kubectl-ray-evidence, which would be the checkout, and on kwok's nodes, which
// serve no logs, each heal warns that its logs were not kept, which the tests not about evidence
// do not expect. The tests of the evidence pass --evidence-dir.
func (h *H) evidenceOff(args []string) []string {
	if !slices.Contains(args, "heal") || slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "evidence") }) {
		return args
	}
	return append(args, "--no-evidence")
}

func hasNamespaceFlag(args []string) bool {
	for _, a := range args {
		if a == "-n" || a == "--namespace" || a == "-A" || a == "--all-namespaces" || strings.HasPrefix(a, "--namespace=") {
			return true
		}
	}
	return false
}

// sampleCluster is KubeRay's ray-cluster.complete.yaml sample, as shipped in the ray-operator module.
func (h *H) sampleCluster(name string) *rayv1.RayCluster {
	h.T.Helper()
	data, err := os.ReadFile(h.SB.Config().SamplePath("ray-cluster.complete.yaml"))
	if err != nil {
		h.T.Fatal(err)
	}
	rc := &rayv1.RayCluster{}
	if err := yaml.Unmarshal(data, rc); err != nil {
		h.T.Fatal(err)
	}
	rc.Name, rc.Namespace = name, h.NS
	return rc
}

// CreateRayCluster creates the sample RayCluster named name, changed by mutate (may be nil).
func (h *H) CreateRayCluster(name string, mutate func(*rayv1.RayCluster)) *rayv1.RayCluster {
	h.T.Helper()
	rc := h.sampleCluster(name)
	if mutate != nil {
		mutate(rc)
	}
	created, err := h.Ray.RayV1().RayClusters(h.NS).Create(h.Ctx, rc, metav1.CreateOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	return created
}

// Pods lists the pods of a RayCluster by node type ("head", "worker").
func (h *H) Pods(cluster, nodeType string) []corev1.Pod {
	h.T.Helper()
	list, err := h.Kube.CoreV1().Pods(h.NS).List(h.Ctx, metav1.ListOptions{
		LabelSelector: "ray.io/cluster=" + cluster + ",ray.io/node-type=" + nodeType})
	if err != nil {
		h.T.Fatal(err)
	}
	return list.Items
}

// WaitFor polls cond until it holds or timeout passes; the failure names what was awaited.
func (h *H) WaitFor(what string, timeout time.Duration, cond func() (bool, error)) {
	h.T.Helper()
	var last error
	err := wait.PollUntilContextTimeout(h.Ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok && err == nil, nil
	})
	if err != nil {
		h.T.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, last)
	}
}

// WaitClusterRunning waits until the cluster has exactly one head Running and Ready and every
// worker Running; it returns the head.
func (h *H) WaitClusterRunning(cluster string, timeout time.Duration) corev1.Pod {
	h.T.Helper()
	var head corev1.Pod
	h.WaitFor("RayCluster "+cluster+" head and workers Running", timeout, func() (bool, error) {
		heads := h.Pods(cluster, "head")
		workers := h.Pods(cluster, "worker")
		if len(heads) != 1 || !PodRunningReady(&heads[0]) || len(workers) == 0 {
			return false, nil
		}
		for i := range workers {
			if !PodRunningReady(&workers[i]) {
				return false, nil
			}
		}
		head = heads[0]
		return true, nil
	})
	return head
}

// WaitStateReady waits for the operator's .status.state ready. KubeRay writes it on a reconcile
// of its own, which can come a moment after every pod runs (seen in CI under load); a test that
// breaks the head before then finds a state that was never ready, and no status-stale finding.
func (h *H) WaitStateReady(cluster string, timeout time.Duration) {
	h.T.Helper()
	h.WaitFor("RayCluster "+cluster+" state ready", timeout, func() (bool, error) {
		c, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, cluster, metav1.GetOptions{})
		return err == nil && c.Status.State == rayv1.Ready, err
	})
}

// PodRunningReady reports phase Running with the Ready condition True and no deletion pending.
func PodRunningReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// dumpState logs the namespace's pods and the operator's last log lines, for a failed test.
func (h *H) dumpState() {
	list, err := h.Kube.CoreV1().Pods(h.NS).List(context.Background(), metav1.ListOptions{})
	if err == nil {
		for _, p := range list.Items {
			h.T.Logf("pod %s phase=%s reason=%s deleting=%v node=%s", p.Name, p.Status.Phase, p.Status.Reason, p.DeletionTimestamp != nil, p.Spec.NodeName)
		}
	}
	if sl, err := h.Kube.DiscoveryV1().EndpointSlices(h.NS).List(context.Background(), metav1.ListOptions{}); err == nil {
		for _, s := range sl.Items {
			var eps []string
			for _, e := range s.Endpoints {
				eps = append(eps, fmt.Sprintf("%v ready=%v", e.Addresses, e.Conditions.Ready != nil && *e.Conditions.Ready))
			}
			var ports []string
			for _, p := range s.Ports {
				if p.Name != nil && p.Port != nil {
					ports = append(ports, fmt.Sprintf("%s:%d", *p.Name, *p.Port))
				}
			}
			h.T.Logf("endpointslice %s (service %s) ports %v endpoints %v", s.Name, s.Labels["kubernetes.io/service-name"], ports, eps)
		}
	}
	h.T.Logf("operator log tail: %s", h.SB.LogTail("kuberay-operator", 5))
}

// lazySandbox is a sandbox started the first time a test asks for it and stopped when the
// package's tests end (stopExtraSandboxes).
type lazySandbox struct {
	what string // for the failure: "KubeRay v1.5.0"
	cfg  sandbox.Config
	once sync.Once
	sb   *sandbox.Sandbox
	err  error
}

func (l *lazySandbox) get(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	l.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cfg := l.cfg
		cfg.Dir, cfg.DieWithParent = filepath.Join(env.work, cfg.Dir), true
		l.sb, l.err = sandbox.Up(ctx, cfg, os.Stderr)
	})
	if l.err != nil {
		t.Fatalf("starting the %s sandbox: %v", l.what, l.err)
	}
	return l.sb
}

// The sandboxes beside the shared v1.1.1 one. Each newer operator's has the ServeNetwork
// (loopback pod IPs, cluster DNS for the operator), so its RayService controller can reach the
// Ray stand-ins of test/play (StartRay). The v1.1.1 one with the ServeNetwork is for the live
// RayService tests only: the shared v1.1.1 sandbox's tests play the RayService controller's part
// themselves, and with a pod network the real one would act as well.
var (
	v150 = &lazySandbox{what: "KubeRay v1.5.0", cfg: sandbox.Config{Dir: "sandbox-v1.5.0", Operator: sandbox.OperatorV150, ServeNetwork: true}}
	v160 = &lazySandbox{what: "KubeRay v1.6.0", cfg: sandbox.Config{Dir: "sandbox-v1.6.0", Operator: sandbox.OperatorV160, ServeNetwork: true}}
	v170 = &lazySandbox{what: "KubeRay v1.7.0", cfg: sandbox.Config{Dir: "sandbox-v1.7.0", Operator: sandbox.OperatorV170, ServeNetwork: true,
		// Its NetworkPolicy and RayCronJob controllers, the embedded GCS store and mTLS (alpha, off
		// by default): the matrix's network-policy-dns, raycronjob-run, gcs-store-shared and
		// tls-no-cert-manager cases (no cert-manager runs here).
		OperatorFeatureGates: "RayClusterNetworkPolicy=true,RayCronJob=true,GCSFaultToleranceEmbeddedStorage=true,RayClusterMTLS=true"}}
	v111Serve = &lazySandbox{what: "KubeRay v1.1.1 ServeNetwork", cfg: sandbox.Config{Dir: "sandbox-v1.1.1-serve", Operator: sandbox.OperatorV111, ServeNetwork: true}}
)

func sandboxV150(t *testing.T) *sandbox.Sandbox      { return v150.get(t) }
func sandboxV160(t *testing.T) *sandbox.Sandbox      { return v160.get(t) }
func sandboxV170(t *testing.T) *sandbox.Sandbox      { return v170.get(t) }
func sandboxV111Serve(t *testing.T) *sandbox.Sandbox { return v111Serve.get(t) }

func stopExtraSandboxes() {
	for _, l := range []*lazySandbox{v111Serve, v150, v160, v170, v170StatusCheck} {
		if l.sb != nil {
			_ = l.sb.Down()
		}
	}
}

// operatorSample reads KubeRay version's own sample file (its config/samples) as one object, and
// returns it with its path.
func (h *H) operatorSample(version, file string) (map[string]any, string) {
	h.T.Helper()
	path, err := h.SB.Config().OperatorSample(h.Ctx, version, file)
	if err != nil {
		h.T.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		h.T.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		h.T.Fatalf("%s: %v", path, err)
	}
	return m, path
}
