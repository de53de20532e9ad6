//go:build bench

package doctor

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/kubectl-ray/kubectl-ray/bench/internal/measure"
	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

const (
	// The watchdog's targets (docs/performance.md), for the watchdog over the same fleet as doctor.
	maxWatchdogRSSBytes = 150_000_000 // steady state after the informers synced, and after the evictions
	maxReactionP99      = 100 * time.Millisecond
	reactionEvictions   = 100
	reactionEvery       = 200 * time.Millisecond
	settle              = 15 * time.Second
)

// watchdogAtScale runs `kubectl-ray heal --watch -A --min-age 0s` (the real binary) over the
// filled sandbox: its RSS once the informers synced and it healed the heads broken for doctor
// (steady state), then its reaction to 100 evictions, one every 200 ms (open loop), from each
// acknowledged status write to the pod's DELETED watch event.
func watchdogAtScale(ctx context.Context, t *testing.T, sb *sandbox.Sandbox, bin string) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--kubeconfig", sb.Kubeconfig(), "heal", "--watch", "--yes", "--min-age", "0s", "-A", "-o", "json")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	watching := make(chan map[string]string, 1)
	var mu sync.Mutex
	logged := map[string]string{}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			m := map[string]string{}
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			if m["msg"] == "watching" {
				watching <- m
			}
			if m["result"] != "" {
				mu.Lock()
				if _, dup := logged[m["pod"]]; dup {
					t.Errorf("watchdog acted twice on %s", m["pod"])
				}
				logged[m["pod"]] = m["result"]
				mu.Unlock()
			}
		}
	}()
	select {
	case w := <-watching:
		t.Logf("watchdog: informers synced over %s RayClusters in %s", w["rayclusters"], time.Since(start).Round(time.Millisecond))
	case <-time.After(5 * time.Minute):
		t.Fatal("the watchdog did not sync within 5 minutes")
	}
	time.Sleep(settle) // it heals the heads broken for doctor, then idles
	rss, hwm := procMemory(t, cmd.Process.Pid)
	t.Logf("watchdog: steady-state RSS %.1f MB (%.1f MiB) %s after the sync; its high-water mark so far %.1f MB", float64(rss)/1e6, float64(rss)/(1<<20), settle, float64(hwm)/1e6)
	if rss > maxWatchdogRSSBytes {
		t.Errorf("watchdog's steady-state RSS %.1f MB > %d MB", float64(rss)/1e6, maxWatchdogRSSBytes/1_000_000)
	}

	deleted := watchHeadDeletes(ctx, t, sb)
	acked := map[string]time.Time{}
	tick := time.NewTicker(reactionEvery)
	defer tick.Stop()
	per := 1 + workersPerCluster
	for k := 0; k < reactionEvictions; k++ {
		<-tick.C
		// Heads of healthy clusters: i = k × clusters/100 + 1 is never a multiple of brokenEvery.
		i := k*clusters/reactionEvictions + 1
		name := fmt.Sprintf("%s-head-%05d", clusterName(i), i*per)
		if _, err := play.KubeletEvict(ctx, sb.Kube, nsName(i), name, "memory"); err != nil {
			t.Fatal(err)
		}
		acked[nsName(i)+"/"+name] = time.Now()
	}
	deadline := time.Now().Add(time.Minute)
	var ds []time.Duration
	for len(ds) < reactionEvictions && time.Now().Before(deadline) {
		ds = ds[:0]
		for k, t0 := range acked {
			if at, ok := deleted.Get(k); ok {
				ds = append(ds, at.Sub(t0))
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(ds) != reactionEvictions {
		t.Fatalf("%d of %d evicted heads deleted", len(ds), reactionEvictions)
	}
	rss2, hwm2 := procMemory(t, cmd.Process.Pid)
	p99 := measure.Percentile(ds, 99)
	t.Logf("watchdog: reaction, eviction acknowledged → pod DELETED watch event, n=%d: p50 %s, p99 %s, max %s",
		len(ds), measure.Percentile(ds, 50).Round(100*time.Microsecond), p99.Round(100*time.Microsecond), measure.Percentile(ds, 100).Round(100*time.Microsecond))
	t.Logf("watchdog: RSS after the evictions %.1f MB, high-water mark %.1f MB", float64(rss2)/1e6, float64(hwm2)/1e6)
	// Steady means at work too: a hundred heals later the resident size must still hold.
	if rss2 > maxWatchdogRSSBytes {
		t.Errorf("watchdog's RSS after the evictions %.1f MB > %d MB", float64(rss2)/1e6, maxWatchdogRSSBytes/1_000_000)
	}
	if p99 > maxReactionP99 {
		t.Errorf("watchdog's reaction p99 %s > %s", p99.Round(100*time.Microsecond), maxReactionP99)
	}
}

// procMemory reads a process's resident set and its high-water mark (VmRSS, VmHWM) in bytes. Both
// belong to the process's own address space, so unlike ru_maxrss they include nothing of the
// benchmark that started it (see bench/maxrss).
func procMemory(t *testing.T, pid int) (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || f[2] != "kB" {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = n << 10
		case "VmHWM:":
			hwm = n << 10
		}
	}
	return rss, hwm
}

// watchHeadDeletes watches every head's deletion from now on; it resumes where it was if the API
// server closes the watch (it closes watchers too slow for its cache).
func watchHeadDeletes(ctx context.Context, t *testing.T, sb *sandbox.Sandbox) *measure.Arrivals {
	const sel = "ray.io/node-type=head"
	list, err := sb.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1, LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return sb.Kube.CoreV1().Pods("").Watch(ctx, o)
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	d := measure.NewArrivals()
	go func() {
		for ev := range w.ResultChan() {
			now := time.Now()
			if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Deleted {
				d.See(p.Namespace+"/"+p.Name, now)
			}
		}
	}()
	return d
}
