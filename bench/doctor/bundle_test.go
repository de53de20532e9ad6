//go:build bench

package doctor

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	rayclient "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	kubeclients "github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// The bundle's goal without logs (docs/performance.md): within twice the bare LIST of the same
// run, and a peak RSS of 120 MB as the goal writes it (114 MiB).
const (
	bundleMaxRatio = 2.0
	bundleMaxRSS   = 120_000_000
)

// TestBundleAtScale: `kubectl ray bundle -A --no-logs` on the fleet doctor is measured on (1,000
// RayClusters, 5,000 pods at -scale 1), against the same floor as doctor (a bare paged LIST of the
// pods and RayClusters), alternated in one run, with its request count and peak RSS. Then one
// namespace's bundle with logs: the log reads must be exactly the containers asked for (each
// started container once, once more for a restarted one's previous log), which kwok's nodes,
// having no kubelet, refuse; the bundle is still written and lists each in its index. It fails when
// the bundle without logs misses its goal (bundleMaxRatio, bundleMaxRSS).
//
//	go test -tags bench -run TestBundleAtScale -v -timeout 40m ./bench/doctor/
func TestBundleAtScale(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 35*time.Minute)
	defer cancel()
	clusters = 1000 * *scale
	t.Logf("fleet: %d RayClusters, %d pods (-scale %d)", clusters, clusters*(1+workersPerCluster), *scale)
	work := t.TempDir()
	bin, launcher := builds(ctx, t, work)
	sb, ray := bareSandbox(ctx, t, work)
	defer sb.Down()
	fill(ctx, t, sb, ray)

	proxy, err := newCountingProxy(sb.Admin)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	kubeconfig := proxyKubeconfig(t, work, proxy, "default")
	holdForProfiling(t, kubeconfig)
	cfg := &rest.Config{Host: proxy.URL, QPS: 50, Burst: 100}
	kube := kubernetes.NewForConfigOrDie(kubeclients.Protobuf(cfg))
	rc := rayclient.NewForConfigOrDie(cfg)

	archive := filepath.Join(work, "fleet.tar.gz")
	var bare, bun []time.Duration
	var bunReqs int64
	var bunRSS int64
	var bunPaths []string
	var cmp []time.Duration
	var cmpRSS int64
	for i := 0; i < runs; i++ {
		runtime.GC()
		proxy.reset()
		start := time.Now()
		if np, nc := bareList(ctx, t, kube, rc); np != clusters*(1+workersPerCluster) || nc != clusters {
			t.Fatalf("bare LIST read %d pods, %d RayClusters", np, nc)
		}
		bare = append(bare, time.Since(start))
		proxy.reset()
		res, _, err := measured(ctx, launcher, work, bin, "bundle", "-A", "--no-logs", "-o", archive, "--force", "--kubeconfig", kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		bun = append(bun, time.Duration(res.WallNanos))
		bunRSS = max(bunRSS, res.MaxRSSBytes)
		bunReqs, bunPaths = proxy.reset()
		if *compareBin != "" {
			// The other build in turn, on the same fleet: the redactor's cost is this tree's
			// bundle against one built before it.
			res, _, err := measured(ctx, launcher, work, *compareBin, "bundle", "-A", "--no-logs", "-o", archive, "--force", "--kubeconfig", kubeconfig)
			if err != nil {
				t.Fatal(err)
			}
			cmp = append(cmp, time.Duration(res.WallNanos))
			cmpRSS = max(cmpRSS, res.MaxRSSBytes)
			proxy.reset()
		}
	}
	st, err := os.Stat(archive)
	if err != nil {
		t.Fatal(err)
	}
	a, b := median(bare), median(bun)
	t.Logf("machine: %d CPUs (GOMAXPROCS %d), %s", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
	t.Logf("(a) bare paged LIST of pods + RayClusters: median %s of %v", a.Round(time.Millisecond), rounded(bare))
	t.Logf("(b) kubectl-ray bundle -A --no-logs:        median %s of %v, %d requests, peak RSS %.1f MiB, archive %.1f MiB",
		b.Round(time.Millisecond), rounded(bun), bunReqs, float64(bunRSS)/(1<<20), float64(st.Size())/(1<<20))
	t.Logf("b/a = %.2f (goal ≤ %.1f); RSS %.1f MB = %.1f MiB (goal ≤ %d MB); bundle's requests:\n  %s",
		float64(b)/float64(a), bundleMaxRatio, float64(bunRSS)/1e6, float64(bunRSS)/(1<<20), bundleMaxRSS/1_000_000, strings.Join(bunPaths, "\n  "))
	if float64(b) > bundleMaxRatio*float64(a) {
		t.Errorf("bundle -A --no-logs took %.2f× the bare LIST (goal ≤ %.1f×)", float64(b)/float64(a), bundleMaxRatio)
	}
	if bunRSS > bundleMaxRSS {
		t.Errorf("bundle -A --no-logs peak RSS %.1f MB (goal ≤ %d MB)", float64(bunRSS)/1e6, bundleMaxRSS/1_000_000)
	}
	if *compareBin != "" {
		c := median(cmp)
		t.Logf("(c) -compare-bin %s bundle -A --no-logs: median %s of %v, peak RSS %.1f MiB; this tree against it: %.2f",
			*compareBin, c.Round(time.Millisecond), rounded(cmp), float64(cmpRSS)/(1<<20), float64(b)/float64(c))
		// The redactor's bound: this tree's bundle within 1.25x of a build before it, that is the
		// redactor at most 20% of the bundle's time.
		if float64(b) > 1.25*float64(c) {
			t.Errorf("this tree's bundle takes %.2fx the compared build's, over 1.25x", float64(b)/float64(c))
		}
	}
	for _, p := range bunPaths {
		if strings.Contains(p, "/log?") {
			t.Errorf("--no-logs read a log: %s", p)
		}
	}

	// With logs, one namespace: as many log reads as containers asked for.
	ns := nsName(0)
	pods, err := sb.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "ray.io/is-ray-node=yes"})
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	for i := range pods.Items {
		asked += len(artifact.PodLogs(&pods.Items[i]))
	}
	proxy.reset()
	withLogs := filepath.Join(work, "ns.tar.gz")
	res, out, err := measured(ctx, launcher, work, bin, "bundle", "-n", ns, "-o", withLogs, "--force", "--kubeconfig", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	n, paths := proxy.reset()
	logReads := 0
	for _, p := range paths {
		if strings.Contains(p, "/log?") {
			logReads++
		}
	}
	t.Logf("(c) kubectl-ray bundle -n %s (%d pods, logs): %s, %d requests of which %d log reads (containers asked for: %d), peak RSS %.1f MiB\n%s",
		ns, len(pods.Items), time.Duration(res.WallNanos).Round(time.Millisecond), n, logReads, asked, float64(res.MaxRSSBytes)/(1<<20), out)
	if asked == 0 || logReads != asked {
		t.Errorf("%d log reads, want one per container asked for: %d", logReads, asked)
	}
	bundleLogsAtScale(ctx, t, proxy, kube, launcher, work, bin, kubeconfig, ns, pods.Items)
}
