//go:build bench

package doctor

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
)

// servedLog is the log the proxy answers every pods/log GET with: lines shaped like a Ray
// worker's, one in 50 naming a token, so that the redactor's keyword pass and gitleaks read some
// (about 64 kB).
func servedLog() []byte {
	var b strings.Builder
	for i := 0; b.Len() < 64<<10; i++ {
		if i%50 == 0 {
			fmt.Fprintf(&b, "2026-12-06 21:54:%02d,%03d\tINFO auth.py:88 -- refreshed the authentication token of job raysubmit_%04d\n", i%60, i%1000, i)
			continue
		}
		fmt.Fprintf(&b, "2026-12-06 21:54:%02d,%03d\tINFO worker.py:%d -- task %06d finished in 0.%02d s; object store 12.3 MiB used (node 10.0.%d.%d)\n",
			i%60, i%1000, 1000+i%300, i, i%100, i%4, i%250)
	}
	return []byte(b.String())
}

// bundleLogsAtScale times, with the proxy playing a kubelet that serves every container's log
// (kwok's nodes serve none), `bundle -n ns` with its logs beside its floor: the same log reads
// done bare (GETs of pods/log with the bundle's default caps, 8 at a time as the bundle reads,
// each body read and dropped), alternated, three runs each. Reported: requests/s and bytes/s of
// each; no goal is set on it.
func bundleLogsAtScale(ctx context.Context, t *testing.T, proxy *countingProxy, kube kubernetes.Interface, launcher, work, bin, kubeconfig, ns string, pods []corev1.Pod) {
	body := servedLog()
	proxy.logs.Store(&body)
	defer proxy.logs.Store(nil)
	var reqs []artifact.LogRequest
	for i := range pods {
		reqs = append(reqs, artifact.PodLogs(&pods[i])...)
	}
	limits := artifact.LogLimits{Tail: 2000, LimitBytes: 1 << 20}
	var bare, bun []time.Duration
	var bareBytes int64
	var bunRSS int64
	var bunReads int
	for i := 0; i < runs; i++ {
		proxy.reset()
		start := time.Now()
		var n atomic.Int64
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(8)
		for _, r := range reqs {
			g.Go(func() error {
				rc, err := kube.CoreV1().Pods(r.Namespace).GetLogs(r.Pod, limits.Options(r.Container, r.Previous)).Stream(gctx)
				if err != nil {
					return err
				}
				defer rc.Close()
				c, err := io.Copy(io.Discard, rc)
				n.Add(c)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			t.Fatalf("bare log reads: %v", err)
		}
		bare = append(bare, time.Since(start))
		bareBytes = n.Load()
		proxy.reset()
		res, _, err := measured(ctx, launcher, work, bin, "bundle", "-n", ns, "--no-ray-logs", "-o", filepath.Join(work, "logs.tar.gz"), "--force", "--kubeconfig", kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		bun = append(bun, time.Duration(res.WallNanos))
		bunRSS = max(bunRSS, res.MaxRSSBytes)
		_, paths := proxy.reset()
		bunReads = 0
		for _, p := range paths {
			if strings.Contains(p, "/log?") {
				bunReads++
			}
		}
	}
	a, b := median(bare), median(bun)
	rate := func(n int64, d time.Duration) string {
		return fmt.Sprintf("%.0f requests/s, %.1f MB/s", float64(len(reqs))/d.Seconds(), float64(n)/1e6/d.Seconds())
	}
	t.Logf("(d) logs served by the proxy, %d containers of %s, %d kB each:", len(reqs), ns, len(body)/1000)
	t.Logf("    bare log reads, 8 at a time:  median %s of %v: %s", a.Round(time.Millisecond), rounded(bare), rate(bareBytes, a))
	t.Logf("    kubectl-ray bundle -n %s:  median %s of %v: %s (its snapshot and the archive included), %d log reads, peak RSS %.1f MiB; b/a = %.2f",
		ns, b.Round(time.Millisecond), rounded(bun), rate(bareBytes, b), bunReads, float64(bunRSS)/(1<<20), float64(b)/float64(a))
	if bunReads != len(reqs) {
		t.Errorf("the bundle read %d logs, want one per container asked for: %d", bunReads, len(reqs))
	}
}
