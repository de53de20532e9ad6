//go:build bench

package doctor

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	rayclient "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// rayClusters is the fleet of TestDoctorRayAtScale: 100 RayClusters, a head and a worker each.
const rayClusters = 100

// TestDoctorRayAtScale measures doctor --ray on 100 RayClusters whose heads' dashboards are the
// Ray stand-ins of test/play (PlayDashboardStateAPI, behind kwok's port-forwards), in one run:
// (a) doctor without Ray's view, (b) with it, (c) with it and every dashboard answer delayed
// (a slow dashboard: 5 reads of 200ms each, 1s a cluster). It reports the wall times and the
// port-forwards (POSTs to pods/portforward through the counting proxy); see docs/performance.md:
//
//	go test -tags bench -run TestDoctorRayAtScale -v -timeout 20m ./bench/doctor/
func TestDoctorRayAtScale(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	work := t.TempDir()
	bin, launcher := builds(ctx, t, work)
	sb, ray := bareSandbox(ctx, t, work)
	defer sb.Down()
	const ns = "bench-ray"
	if _, err := sb.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var delay atomic.Int64
	stand, err := play.StartRay(ctx, sb.Kube, sb.Admin, ns, play.RayOptions{DashboardDelay: func() time.Duration { return time.Duration(delay.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	defer stand.Close()
	fillRay(ctx, t, sb, ray, ns)

	proxy, err := newCountingProxy(sb.Admin)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	kubeconfig := proxyKubeconfig(t, work, proxy, ns)
	doctor := func(args ...string) (time.Duration, int, int) {
		t.Helper()
		proxy.reset()
		res, out, err := measured(ctx, launcher, work, bin, append([]string{"doctor", "-o", "json", "--fail-on", "never", "--kubeconfig", kubeconfig}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		_, paths := proxy.reset()
		forwards := 0
		for _, p := range paths {
			if strings.Contains(p, "/portforward") {
				forwards++
			}
		}
		var d struct {
			Clusters []struct {
				Ray *struct{ Read bool }
			}
		}
		if err := json.Unmarshal(out, &d); err != nil {
			t.Fatal(err)
		}
		read := 0
		for _, c := range d.Clusters {
			if c.Ray != nil && c.Ray.Read {
				read++
			}
		}
		return time.Duration(res.WallNanos), forwards, read
	}
	// The stand-ins serve once kwok runs the pods: wait until every dashboard is read.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, _, read := doctor("--ray"); read == rayClusters {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("only %d of %d dashboards read", read, rayClusters)
		}
		time.Sleep(2 * time.Second)
	}
	var without, with, slow []time.Duration
	var forwards, slowRead int
	for i := 0; i < runs; i++ {
		d, _, _ := doctor("--ray=false")
		without = append(without, d)
		d, f, read := doctor("--ray")
		with, forwards = append(with, d), f
		if read != rayClusters {
			t.Errorf("run %d: %d of %d dashboards read", i, read, rayClusters)
		}
		delay.Store(int64(200 * time.Millisecond))
		d, _, slowRead = doctor("--ray")
		slow = append(slow, d)
		delay.Store(0)
	}
	t.Logf("(a) doctor -n %s -o json (%d RayClusters, no Ray): median %s of %v", ns, rayClusters, median(without).Round(time.Millisecond), rounded(without))
	t.Logf("(b) the same with --ray: median %s of %v; %d port-forwards (one per head)", median(with).Round(time.Millisecond), rounded(with), forwards)
	t.Logf("(c) --ray, every dashboard answer 200ms late (1s a cluster): median %s of %v; %d dashboards read", median(slow).Round(time.Millisecond), rounded(slow), slowRead)
	if forwards != rayClusters {
		t.Errorf("%d port-forwards for %d heads", forwards, rayClusters)
	}
}

// fillRay creates rayClusters RayClusters (KubeRay's complete sample) in ns with a head and a
// worker each, and waits until kwok runs every pod.
func fillRay(ctx context.Context, t *testing.T, sb *sandbox.Sandbox, ray rayclient.Interface, ns string) {
	sample := completeSample(t, sb)
	err := parallel(rayClusters, 16, func(i int) error {
		name := clusterName(i)
		rc := sample.DeepCopy()
		rc.Name, rc.Namespace = name, ns
		created, err := ray.RayV1().RayClusters(ns).Create(ctx, rc, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		yes := true
		for k, nodeType := range []string{"head", "worker"} {
			p := rayPod(ns, name, nodeType, 2*i+k, sandbox.NodeName((2*i+k)%nodes))
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: name, UID: created.UID, Controller: &yes, BlockOwnerDeletion: &yes}}
			if _, err := sb.Kube.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for {
		list, err := sb.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		running := 0
		for i := range list.Items {
			if p := &list.Items[i]; runningReady(p) && p.Status.PodIP != "" {
				running++
			}
		}
		if running == 2*rayClusters {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("only %d of %d pods Running", running, 2*rayClusters)
		}
		time.Sleep(2 * time.Second)
	}
}
