package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

// Up starts a sandbox in cfg.Dir and waits until it is ready: nodes Ready, CRDs established,
// the operator healthy. On failure everything it started is stopped again.
func Up(ctx context.Context, cfg Config, out io.Writer) (_ *Sandbox, err error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if st, err := loadState(cfg.Dir); err == nil && anyAlive(st) {
		return nil, fmt.Errorf("a sandbox is already up in %s: run `down --dir %s` first, or pick another --dir", cfg.Dir, cfg.Dir)
	}
	for _, bin := range []string{cfg.etcdBin(), cfg.kubeBin("kube-apiserver"), cfg.kwokBin(), cfg.kwokStages()} {
		if _, err := os.Stat(bin); err != nil {
			return nil, fmt.Errorf("%s is not built: run `make sandbox-build` (or `go run ./hack/sandbox build`) first", bin)
		}
	}
	if cfg.Operator != OperatorNone {
		if _, err := os.Stat(cfg.operatorBin(cfg.Operator)); err != nil {
			return nil, fmt.Errorf("KubeRay operator %s is not built: run `go run ./hack/sandbox build --operator %s` first", cfg.Operator, cfg.Operator)
		}
	}
	// A fresh state each time: old data would resurrect old objects.
	if err := os.RemoveAll(cfg.Dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	sb := &Sandbox{cfg: cfg, state: &State{Operator: cfg.Operator, Ports: map[string]int{}}, out: out}
	defer func() {
		if err != nil {
			sb.stopAll()
		}
	}()
	start := time.Now()
	if err := sb.startControlPlane(ctx); err != nil {
		return nil, err
	}
	if err := sb.installBasics(ctx); err != nil {
		return nil, err
	}
	if err := sb.startKwok(ctx); err != nil {
		return nil, err
	}
	if err := sb.createNodes(ctx, cfg.Nodes); err != nil {
		return nil, err
	}
	if cfg.RealNode {
		if err := sb.startRealNode(ctx); err != nil {
			return nil, err
		}
	}
	if cfg.ServeNetwork {
		dyn, err := dynamic.NewForConfig(sb.Admin)
		if err != nil {
			return nil, err
		}
		if sb.svcProxy, err = startServiceProxy(sb.Kube, dyn); err != nil {
			return nil, err
		}
		sb.state.ServiceProxy = sb.svcProxy.URL
		sb.logf("pod network for the operator: HTTP_PROXY=%s (<svc>.<ns>.svc.%s and pod IPs to the pods' PortForward targets)", sb.svcProxy.URL, ClusterDomain)
	}
	if cfg.Operator != OperatorNone {
		if err := sb.startOperator(ctx); err != nil {
			return nil, err
		}
	}
	real := ""
	if cfg.RealNode {
		real = " and the real node " + RealNodeName
	}
	sb.logf("ready in %s: %d nodes%s, KubeRay operator %s", time.Since(start).Round(100*time.Millisecond), cfg.Nodes, real, cfg.Operator)
	return sb, sb.state.save(cfg.Dir)
}

func anyAlive(st *State) bool {
	for _, p := range st.Procs {
		if alive(p.PID) {
			return true
		}
	}
	return false
}

func (sb *Sandbox) startControlPlane(ctx context.Context) error {
	cfg := sb.cfg
	ports, err := freePorts(8)
	if err != nil {
		return err
	}
	names := []string{"etcd", "etcd-peer", "apiserver", "controller-manager", "scheduler", "kwok", "operator-metrics", "operator-health"}
	for i, n := range names {
		sb.state.Ports[n] = ports[i]
	}
	p := sb.state.Ports
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(p["etcd"])
	sb.logf("starting etcd %s on %s", EtcdVersion, etcdURL)
	proc, err := sb.start("etcd", cfg.etcdBin(),
		"--data-dir", filepath.Join(cfg.Dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", "http://127.0.0.1:"+strconv.Itoa(p["etcd-peer"]),
		"--initial-advertise-peer-urls", "http://127.0.0.1:"+strconv.Itoa(p["etcd-peer"]),
		"--initial-cluster", "default=http://127.0.0.1:"+strconv.Itoa(p["etcd-peer"]),
		"--quota-backend-bytes", strconv.Itoa(4<<30), "--log-level", "warn")
	if err != nil {
		return err
	}
	if err := sb.waitHTTP(ctx, "etcd", etcdURL+"/health", "", 30*time.Second, proc.PID); err != nil {
		return err
	}

	pki := filepath.Join(cfg.Dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return err
	}
	if err := writeServiceAccountKeys(filepath.Join(pki, "sa.key"), filepath.Join(pki, "sa.pub")); err != nil {
		return err
	}
	users := newUsers()
	if err := writeTokenFile(filepath.Join(pki, "tokens.csv"), users); err != nil {
		return err
	}
	server := "https://127.0.0.1:" + strconv.Itoa(p["apiserver"])
	sb.state.Server = server
	sb.logf("starting kube-apiserver %s on %s", KubeVersion, server)
	proc, err = sb.start("kube-apiserver", cfg.kubeBin("kube-apiserver"), sb.apiserverArgs()...)
	if err != nil {
		return err
	}
	if err := sb.waitHTTP(ctx, "kube-apiserver", server+"/readyz", users[0].token, 60*time.Second, proc.PID); err != nil {
		return err
	}
	if err := writeKubeconfig(cfg.Kubeconfig(), server, filepath.Join(pki, "apiserver.crt"), users); err != nil {
		return err
	}
	sb.state.Kubeconfig = cfg.Kubeconfig()
	if err := sb.connect(); err != nil {
		return err
	}

	sb.logf("starting kube-controller-manager and kube-scheduler")
	cm, err := sb.start("kube-controller-manager", cfg.kubeBin("kube-controller-manager"),
		"--kubeconfig", cfg.Kubeconfig(),
		"--service-account-private-key-file", filepath.Join(pki, "sa.key"),
		"--root-ca-file", filepath.Join(pki, "apiserver.crt"),
		"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port", strconv.Itoa(p["controller-manager"]),
		// On 2 busy cores kwok's Lease renewals can lag; a longer grace keeps nodes from flapping
		// NotReady (which turns every pod's Ready condition False) while tests run.
		"--node-monitor-grace-period=2m",
		// Evicted pods are what this project is about: keep podgc from collecting them.
		"--terminated-pod-gc-threshold=100000")
	if err != nil {
		return err
	}
	sched, err := sb.start("kube-scheduler", cfg.kubeBin("kube-scheduler"),
		"--kubeconfig", cfg.Kubeconfig(),
		"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port", strconv.Itoa(p["scheduler"]))
	if err != nil {
		return err
	}
	if err := sb.waitHTTP(ctx, "kube-controller-manager", "https://127.0.0.1:"+strconv.Itoa(p["controller-manager"])+"/healthz", "", 60*time.Second, cm.PID); err != nil {
		return err
	}
	return sb.waitHTTP(ctx, "kube-scheduler", "https://127.0.0.1:"+strconv.Itoa(p["scheduler"])+"/healthz", "", 60*time.Second, sched.PID)
}

func (sb *Sandbox) apiserverArgs() []string {
	pki := filepath.Join(sb.cfg.Dir, "pki")
	p := sb.state.Ports
	return []string{
		"--etcd-servers", "http://127.0.0.1:" + strconv.Itoa(p["etcd"]),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port", strconv.Itoa(p["apiserver"]),
		"--cert-dir", pki,
		"--token-auth-file", filepath.Join(pki, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file", filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file", filepath.Join(pki, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		// The advertise address is loopback, which Endpoints never hold: 1.34's lease reconciler
		// failed to write the kubernetes Service's Endpoints every 10 s ("may not be in the
		// loopback range"), and 1.37 refuses to start with it. Nothing here reaches the API
		// server through that Service (the chart's test sets KUBERNETES_SERVICE_HOST), so it
		// has no endpoints, as before.
		"--endpoint-reconciler-type=none",
		// Port-forward and logs go to the node's kubelet port, which kwok serves on loopback.
		"--kubelet-preferred-address-types=InternalIP",
	}
}

// installBasics installs what every sandbox has: the ray.io and kwok CRDs, kwok's stages, and the
// RBAC of the read-only users.
func (sb *Sandbox) installBasics(ctx context.Context) error {
	ap, err := NewApplier(sb.Admin)
	if err != nil {
		return err
	}
	crdVersion := sb.cfg.Operator
	if crdVersion == OperatorNone {
		crdVersion = defaultCRDVersion
	}
	sb.logf("installing the ray.io CRDs (%s), kwok CRDs and stages, read-only users' RBAC", crdVersion)
	for _, f := range []string{sb.cfg.operatorCRDs(crdVersion), sb.cfg.kwokCRDs()} {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if _, err := ap.Create(ctx, data, ""); err != nil {
			return err
		}
	}
	if err := sb.waitCRDsEstablished(ctx); err != nil {
		return err
	}
	ap.Reset()
	stages, err := os.ReadFile(sb.cfg.kwokStages())
	if err != nil {
		return err
	}
	if _, err := ap.Create(ctx, stages, ""); err != nil {
		return err
	}
	return sb.installReaderRBAC(ctx)
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

func (sb *Sandbox) waitCRDsEstablished(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(sb.Admin)
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := dyn.Resource(crdGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, crd := range list.Items {
			conds, _, _ := unstructuredSlice(crd.Object, "status", "conditions")
			ok := false
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					ok = true
				}
			}
			if !ok {
				return false, nil
			}
		}
		return len(list.Items) > 0, nil
	})
}

func unstructuredSlice(obj map[string]any, fields ...string) ([]any, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		cur = m[f]
	}
	s, ok := cur.([]any)
	return s, ok, nil
}

// readerRules are what the sandbox's read-only user may do: exactly what doctor reads.
func readerRules(withNodes bool) []rbacv1.PolicyRule {
	core := []string{"pods", "services", "events"}
	if withNodes {
		core = append(core, "nodes")
	}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: core, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"ray.io"}, Resources: []string{"rayclusters", "rayservices", "rayjobs", "raycronjobs"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"gateways", "httproutes"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: []string{"get", "list", "watch"}},
	}
}

func (sb *Sandbox) installReaderRBAC(ctx context.Context) error {
	for _, u := range []struct {
		user      string
		withNodes bool
	}{{UserReader, true}, {UserNoNodes, false}} {
		name := "kubectl-ray-sandbox:" + u.user
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: readerRules(u.withNodes)}
		if _, err := sb.Kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: u.user}},
		}
		if _, err := sb.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

func (sb *Sandbox) startKwok(ctx context.Context) error {
	p := sb.state.Ports
	sb.logf("starting kwok %s (fake kubelets; stages and port-forwards come from the API)", KwokVersion)
	proc, err := sb.start("kwok", sb.cfg.kwokBin(),
		"--kubeconfig", sb.cfg.Kubeconfig(),
		// Only annotated nodes are kwok's: a test can create a node nobody heartbeats.
		"--manage-nodes-with-annotation-selector", KwokNodeAnnotation+"=fake",
		"--server-address", "127.0.0.1:"+strconv.Itoa(p["kwok"]),
		// kwok serves the kubelet API (port-forward, logs, exec) on --server-address; --node-port is
		// what it writes into each node's kubelet endpoint, where the API server dials: the same port.
		"--node-ip", "127.0.0.1", "--node-port", strconv.Itoa(p["kwok"]),
		// Renew node Leases: the node lifecycle controller takes them as heartbeats. Without them
		// the fast stages post node status only every ~10 minutes, nodes go NotReady ~50 s after
		// creation and every pod's Ready condition turns False.
		"--node-lease-duration-seconds", "40",
		"--enable-crds", "Stage,PortForward,ClusterPortForward,Logs,ClusterLogs,Exec,ClusterExec",
		// Pod IPs are never dialled. Traffic to a pod goes through port-forward to kwok on
		// loopback, or (ServeNetwork) through the service proxy to the pod's PortForward target.
		// Not a loopback range: EndpointSlice validation rejects loopback addresses, so Services
		// would have no endpoints.
		"--cidr", "10.0.0.0/16")
	if err != nil {
		return err
	}
	return sb.waitHTTP(ctx, "kwok", "http://127.0.0.1:"+strconv.Itoa(p["kwok"])+"/healthz", "", 30*time.Second, proc.PID)
}

// KwokNodeAnnotation marks a node kwok manages (heartbeats, pod status).
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

// NodeName is the name of the i-th fake node (0-based).
func NodeName(i int) string { return fmt.Sprintf("kwok-node-%d", i) }

// FakeNode is a node object kwok will manage (or not, when managed is false: nothing heartbeats it).
func FakeNode(name string, managed bool) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok",
		}},
		Status: corev1.NodeStatus{
			Capacity:    nodeResources(),
			Allocatable: nodeResources(),
		},
	}
	if managed {
		n.Annotations = map[string]string{KwokNodeAnnotation: "fake"}
	}
	return n
}

func nodeResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("64"),
		corev1.ResourceMemory:           resource.MustParse("512Gi"),
		corev1.ResourcePods:             resource.MustParse("500"),
		corev1.ResourceEphemeralStorage: resource.MustParse("500Gi"),
	}
}

func (sb *Sandbox) createNodes(ctx context.Context, n int) error {
	sb.logf("creating %d fake nodes", n)
	for i := 0; i < n; i++ {
		if _, err := sb.Kube.CoreV1().Nodes().Create(ctx, FakeNode(NodeName(i), true), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	// Ready, and the not-ready taint every new node gets at admission removed by nodelifecycle:
	// until then nothing schedules. On two cores shared by a whole test run this took over 60 s
	// once (CI, 2026-12-03): 2 minutes, and a failure that says what was missing.
	ready := 0
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := sb.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		ready = 0
		for _, node := range list.Items {
			if _, ok := node.Annotations[KwokNodeAnnotation]; ok && NodeReady(&node) && len(node.Spec.Taints) == 0 {
				ready++
			}
		}
		return ready >= n, nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d fake nodes Ready and untainted in time (kwok's Ready, then the node lifecycle controller's taint removal): %w", ready, n, err)
	}
	return nil
}

// NodeReady reports the node's Ready condition.
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// startOperator starts the operator and waits until it serves. Its ports were drawn when the
// control plane started, free then: should another process have bound one since, it starts
// again on fresh ones rather than fail the whole sandbox.
func (sb *Sandbox) startOperator(ctx context.Context) error {
	return againOnTakenPort(3, func() error { return sb.startOperatorOn(ctx) }, func() error {
		ports, err := freePorts(2)
		if err != nil {
			return err
		}
		sb.logf("kuberay-operator: a port was taken since it was drawn; starting again on %d and %d", ports[0], ports[1])
		sb.state.Ports["operator-metrics"], sb.state.Ports["operator-health"] = ports[0], ports[1]
		return nil
	})
}

// againOnTakenPort runs start up to attempts times, drawing fresh ports (redraw) after each
// failure to bind one; any other failure, or a failed redraw, ends it with start's error.
func againOnTakenPort(attempts int, start, redraw func() error) error {
	for attempt := 1; ; attempt++ {
		err := start()
		if err == nil || attempt == attempts || !strings.Contains(err.Error(), "address already in use") {
			return err
		}
		if redraw() != nil {
			return err
		}
	}
}

func (sb *Sandbox) startOperatorOn(ctx context.Context) error {
	p := sb.state.Ports
	v := sb.cfg.Operator
	sb.logf("starting the KubeRay operator %s (a local process)", v)
	var env []string
	if sb.state.ServiceProxy != "" {
		// Only the cluster DNS names the operator dials (the Ray dashboard behind the head
		// Service) go through it: Go's proxy rules exempt loopback IPs and localhost.
		env = []string{"HTTP_PROXY=" + sb.state.ServiceProxy, "http_proxy=" + sb.state.ServiceProxy}
	}
	env = append(env, sb.cfg.OperatorEnv...)
	args := []string{"--kubeconfig", sb.cfg.Kubeconfig(),
		"--enable-leader-election=false",
		"--metrics-addr", "127.0.0.1:" + strconv.Itoa(p["operator-metrics"]),
		"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(p["operator-health"])}
	if g := sb.cfg.OperatorFeatureGates; g != "" {
		args = append(args, "--feature-gates", g)
	}
	proc, err := sb.startEnv("kuberay-operator", env, sb.cfg.operatorBin(v), args...)
	if err != nil {
		return err
	}
	if err := sb.waitHTTP(ctx, "kuberay-operator", "http://127.0.0.1:"+strconv.Itoa(p["operator-health"])+"/readyz", "", 60*time.Second, proc.PID); err != nil {
		return err
	}
	// Its probes answer before its metrics server binds: an operator that cannot bind that port
	// has answered ready and exits a moment later. Fail the start there, not in every test after.
	time.Sleep(time.Second)
	if !alive(proc.PID) {
		return fmt.Errorf("kuberay-operator exited after its start: %s", sb.LogTail("kuberay-operator", 5))
	}
	return sb.registerOperatorDeployment(ctx, v)
}

// Operator stand-in: the operator runs as a local process, so nothing in the API says it exists.
// A real cluster has its Deployment; the sandbox records one (image tag = the version running,
// its pod played by kwok) so doctor and version find the operator the way they would in a cluster.
const (
	OperatorNamespace = "kuberay-system"
	OperatorName      = "kuberay-operator"
)

// operatorEnvVars is Config.OperatorEnv as the recorded Deployment's container env: the
// settings the operator process runs with, where a cluster's Deployment would say them.
func (sb *Sandbox) operatorEnvVars() []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, kv := range sb.cfg.OperatorEnv {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out = append(out, corev1.EnvVar{Name: k, Value: v})
		}
	}
	return out
}

// operatorDeploymentArgs are the operator's flags a cluster's Deployment would show, as the Helm
// chart writes them: its feature gates.
func (sb *Sandbox) operatorDeploymentArgs() []string {
	if g := sb.cfg.OperatorFeatureGates; g != "" {
		return []string{"--feature-gates=" + g}
	}
	return nil
}

func (sb *Sandbox) registerOperatorDeployment(ctx context.Context, v string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: OperatorNamespace}}
	if _, err := sb.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	labels := map[string]string{"app.kubernetes.io/name": "kuberay-operator", "app.kubernetes.io/component": "kuberay-operator"}
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: OperatorName, Namespace: OperatorNamespace, Labels: labels,
			Annotations: map[string]string{"kubectl-ray.io/sandbox": "stand-in: the operator " + v + " runs as a local process of the sandbox"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "kuberay-operator", Image: "kuberay/operator:" + v, Env: sb.operatorEnvVars(), Args: sb.operatorDeploymentArgs(),
				}}},
			},
		},
	}
	_, err := sb.Kube.AppsV1().Deployments(OperatorNamespace).Create(ctx, d, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
