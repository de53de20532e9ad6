package main

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart"
	"helm.sh/helm/v4/pkg/chart/loader"
	"helm.sh/helm/v4/pkg/kube"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// sandboxUp starts the repository's sandbox (a real kube-apiserver; docs/sandbox.md) with the
// KubeRay operator version named ("none": no operator) for the test, or uses CHART_KUBECONFIG's.
// -short skips it.
func sandboxUp(t *testing.T, operator string, extra ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the sandbox's API server")
	}
	if kc := os.Getenv("CHART_KUBECONFIG"); kc != "" {
		return kc
	}
	dir := t.TempDir()
	up := exec.Command("go", append([]string{"run", "./hack/sandbox", "up", "--operator", operator, "--nodes", "1", "--dir", dir}, extra...)...)
	up.Dir = "../.."
	out, err := up.Output()
	t.Cleanup(func() {
		down := exec.Command("go", "run", "./hack/sandbox", "down", "--dir", dir)
		down.Dir = "../.."
		if b, err := down.CombinedOutput(); err != nil {
			t.Errorf("sandbox down: %v\n%s", err, b)
		}
	})
	m := regexp.MustCompile(`export KUBECONFIG=(\S+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("sandbox up: %v\n%s", err, out)
	}
	return string(m[1])
}

// The rendered objects of the core cases (the monitors need the Prometheus Operator's CRDs,
// which the sandbox does not have) are accepted by a real API server, as a server-side dry
// run: schema, defaults and admission, nothing stored.
func TestServerSideDryRun(t *testing.T) {
	kc := sandboxUp(t, "none")
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery()))
	ctx := context.Background()
	// The namespaces must exist for a dry run in them; they are real and left empty.
	for _, ns := range []string{"ray-system", "team-a", "team-b"} {
		cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	}
	n := 0
	for _, c := range matrix {
		if c.name == "monitors on" {
			continue
		}
		objs, _ := renderObjects(t, c.values)
		for _, o := range objs {
			var u unstructured.Unstructured
			if err := yaml.Unmarshal(o.raw, &u.Object); err != nil {
				t.Fatal(err)
			}
			gvk := u.GroupVersionKind()
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				t.Fatalf("%s: %s: %v", c.name, gvk, err)
			}
			ri := dyn.Resource(m.Resource).Namespace(u.GetNamespace())
			if _, err := ri.Create(ctx, &u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}); err != nil {
				t.Errorf("%s: %s %s/%s: %v", c.name, gvk.Kind, u.GetNamespace(), u.GetName(), err)
			}
			n++
		}
	}
	t.Logf("%d objects accepted by the API server (dry run, strict field validation)", n)
}

// helm install, upgrade and uninstall, through Helm's action library, against the sandbox.
// Uninstall leaves nothing of the watchdog: its Lease is the chart's object.
func TestInstallUpgradeUninstall(t *testing.T) {
	kc := sandboxUp(t, "none")
	const ns, name = "kubectl-ray-chart", "wd"
	cfg, ch, cs := helmFor(t, kc, ns)
	ctx := context.Background()

	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.CreateNamespace = name, ns, true
	in.WaitStrategy = kube.HookOnlyStrategy // no kubelet runs the image here
	if _, err := in.Run(ch, map[string]any{"fullnameOverride": ""}); err != nil {
		t.Fatalf("install: %v", err)
	}
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, name+"-kubectl-ray-heal", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 2 {
		t.Fatalf("after install: %v %+v", err, d)
	}
	lease, err := cs.CoordinationV1().Leases(ns).Get(ctx, "kubectl-ray-heal", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the chart's Lease: %v", err)
	}
	// The watchdog takes the Lease as client-go's leader election does (an update); an upgrade
	// must keep working on a Lease someone else has written.
	holder, dur := "pod-a_1234", int32(15)
	lease.Spec = coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur}
	if _, err := cs.CoordinationV1().Leases(ns).Update(ctx, lease, metav1.UpdateOptions{FieldManager: "kubectl-ray"}); err != nil {
		t.Fatal(err)
	}

	up := action.NewUpgrade(cfg)
	up.Namespace = ns
	up.WaitStrategy = kube.HookOnlyStrategy
	if _, err := up.Run(name, ch, map[string]any{"fullnameOverride": "", "replicas": 3}); err != nil {
		t.Fatalf("upgrade to 3 replicas: %v", err)
	}
	d, _ = cs.AppsV1().Deployments(ns).Get(ctx, name+"-kubectl-ray-heal", metav1.GetOptions{})
	if *d.Spec.Replicas != 3 {
		t.Errorf("after upgrade: %d replicas", *d.Spec.Replicas)
	}
	if l, err := cs.CoordinationV1().Leases(ns).Get(ctx, "kubectl-ray-heal", metav1.GetOptions{}); err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != holder {
		t.Errorf("the upgrade changed the watchdog's Lease: %v %+v", err, l)
	}
	// Down to one replica: no leader election, so no Lease, no PDB, and Recreate.
	if _, err := up.Run(name, ch, map[string]any{"fullnameOverride": "", "replicas": 1}); err != nil {
		t.Fatalf("upgrade to 1 replica: %v", err)
	}
	d, _ = cs.AppsV1().Deployments(ns).Get(ctx, name+"-kubectl-ray-heal", metav1.GetOptions{})
	if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != "Recreate" || slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--leader-elect") {
		t.Errorf("after upgrade to 1: %+v", d.Spec)
	}
	if _, err := cs.CoordinationV1().Leases(ns).Get(ctx, "kubectl-ray-heal", metav1.GetOptions{}); err == nil {
		t.Error("one replica, and the Lease is still there")
	}
	if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, name+"-kubectl-ray-heal", metav1.GetOptions{}); err == nil {
		t.Error("one replica, and the PDB is still there")
	}
	if _, err := up.Run(name, ch, map[string]any{"fullnameOverride": ""}); err != nil {
		t.Fatalf("upgrade back to the defaults: %v", err)
	}

	un := action.NewUninstall(cfg)
	un.WaitStrategy = kube.HookOnlyStrategy
	if _, err := un.Run(name); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	if left := leftAfterUninstall(ctx, t, cs, ns, name); len(left) > 0 {
		t.Errorf("after uninstall, still there: %s", strings.Join(left, ", "))
	}
}

// helmFor is Helm's action configuration for namespace ns of the sandbox kc (release Secrets,
// as helm's default), the chart, and an admin client.
func helmFor(t *testing.T, kc, ns string) (*action.Configuration, chart.Charter, kubernetes.Interface) {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kc
	nsp := ns
	flags.Namespace = &nsp
	cfg := action.NewConfiguration()
	if err := cfg.Init(flags, ns, "secret"); err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := flags.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg, ch, kubernetes.NewForConfigOrDie(rc)
}

// leftAfterUninstall names the kinds of which something of release name is still there, in ns
// or cluster-wide (a Lease or a Helm release Secret in ns counts whatever its labels), after
// waiting up to 30 s for them to go.
func leftAfterUninstall(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) []string {
	t.Helper()
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + name}
	var left []string
	deadline := time.Now().Add(30 * time.Second)
	for {
		left = nil
		add := func(kind string, n int, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				left = append(left, kind)
			}
		}
		l1, err := cs.AppsV1().Deployments(ns).List(ctx, sel)
		add("Deployment", len(l1.Items), err)
		l2, err := cs.CoreV1().ServiceAccounts(ns).List(ctx, sel)
		add("ServiceAccount", len(l2.Items), err)
		l3, err := cs.CoreV1().Services(ns).List(ctx, sel)
		add("Service", len(l3.Items), err)
		l4, err := cs.RbacV1().ClusterRoles().List(ctx, sel)
		add("ClusterRole", len(l4.Items), err)
		l5, err := cs.RbacV1().ClusterRoleBindings().List(ctx, sel)
		add("ClusterRoleBinding", len(l5.Items), err)
		l6, err := cs.RbacV1().Roles(ns).List(ctx, sel)
		add("Role", len(l6.Items), err)
		l7, err := cs.RbacV1().RoleBindings(ns).List(ctx, sel)
		add("RoleBinding", len(l7.Items), err)
		l8, err := cs.PolicyV1().PodDisruptionBudgets(ns).List(ctx, sel)
		add("PodDisruptionBudget", len(l8.Items), err)
		l9, err := cs.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{})
		add("Lease", len(l9.Items), err)
		s, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
		add("Helm release Secret", len(s.Items), err)
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	return left
}
