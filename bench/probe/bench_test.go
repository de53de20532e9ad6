//go:build bench

package probe

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
)

// Both tools get the same target, timeout, keep-alive and no cap on concurrency that matters at
// these rates. A rate is "sustained" when every planned request was sent and the achieved send
// rate, (n-1) / (last send - first send), is within 1% of the asked rate.
const (
	trial       = 3 * time.Second
	reqTimeout  = 2 * time.Second
	maxSchedErr = 0.01
	// maxInFlight caps concurrent requests and connections for both tools alike: target and
	// clients share one process, and each connection costs two file descriptors.
	maxInFlight = 1000
	// maxFailed: a step where the target itself fails measures the target, not the tool.
	maxFailed = 0.01
)

// newTransport is the keep-alive transport both tools use, so only their scheduling differs.
func newTransport() *http.Transport {
	return &http.Transport{MaxIdleConnsPerHost: maxInFlight, MaxConnsPerHost: maxInFlight, IdleConnTimeout: 90 * time.Second, DisableCompression: true}
}

var ladder = []float64{1000, 2000, 4000, 8000, 12000, 16000, 20000, 24000, 32000, 40000, 50000}

// sends is what both tools are judged on: each request's actual send offset and its scheduled one.
type outcome struct {
	planned  int
	sent     []time.Duration // actual send, from the run start
	lag      []time.Duration // actual send - scheduled send
	failures int             // non-2xx or transport errors (the target, not the schedule)
}

func (o outcome) achieved() float64 {
	if len(o.sent) < 2 {
		return 0
	}
	s := slices.Clone(o.sent)
	slices.Sort(s)
	return float64(len(s)-1) / (s[len(s)-1] - s[0]).Seconds()
}

// schedErr is the larger of the rate error and the share of planned requests never sent (vegeta
// stops at the duration and may skip the last one or two; that costs it 0.07% at 1000/s x 3 s).
func (o outcome) schedErr(rate float64) float64 {
	missing := float64(max(0, o.planned-len(o.sent))) / float64(o.planned)
	return max(math.Abs(o.achieved()-rate)/rate, missing)
}

func (o outcome) lagP99() time.Duration {
	if len(o.lag) == 0 {
		return 0
	}
	l := slices.Clone(o.lag)
	slices.Sort(l)
	return l[len(l)*99/100]
}

func target() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "ok")
	}))
}

func runProbe(url string, rate float64, d time.Duration) (outcome, *probe.Result) {
	p := probe.New(probe.Config{Rate: rate, Timeout: reqTimeout, MaxInFlight: maxInFlight, Transport: newTransport()}, probe.NewURL("target", url))
	res := p.Run(context.Background(), d)
	p.Close()
	o := outcome{planned: probe.Planned(rate, d)}
	for _, r := range res.Records {
		o.sent = append(o.sent, r.Sent)
		o.lag = append(o.lag, r.Sent-r.Scheduled)
		if !r.OK() {
			o.failures++
		}
	}
	return o, res
}

func runVegeta(url string, rate float64, d time.Duration) outcome {
	tr0 := newTransport()
	defer tr0.CloseIdleConnections()
	atk := vegeta.NewAttacker(vegeta.Client(&http.Client{Transport: tr0, Timeout: reqTimeout}), vegeta.MaxWorkers(maxInFlight))
	tr := vegeta.NewStaticTargeter(vegeta.Target{Method: "GET", URL: url + "/"})
	pacer := vegeta.ConstantPacer{Freq: int(rate), Per: time.Second}
	o := outcome{planned: probe.Planned(rate, d)}
	interval := time.Duration(float64(time.Second) / rate)
	began := time.Now() // vegeta takes its own start a few microseconds later
	for r := range atk.Attack(tr, pacer, d, "bench") {
		sent := r.Timestamp.Sub(began)
		o.sent = append(o.sent, sent)
		o.lag = append(o.lag, sent-time.Duration(r.Seq)*interval)
		if r.Code < 200 || r.Code >= 400 {
			o.failures++
		}
	}
	return o
}

type step struct {
	rate, achieved, schedErr float64
	lagP99                   time.Duration
	failures                 int
	ok                       bool
}

func search(name string, t *testing.T, run func(rate float64) outcome) (best float64, steps []step) {
	for _, rate := range ladder {
		runtime.GC()
		o := run(rate)
		s := step{rate: rate, achieved: o.achieved(), schedErr: o.schedErr(rate), lagP99: o.lagP99(), failures: o.failures}
		s.ok = s.schedErr <= maxSchedErr && float64(s.failures) <= maxFailed*float64(o.planned)
		t.Logf("%-6s %6.0f/s: sent %d of %d, achieved %.1f/s, schedule error %.3f%%, send lag p99 %v, failed %d",
			name, rate, len(o.sent), o.planned, s.achieved, s.schedErr*100, s.lagP99, s.failures)
		steps = append(steps, s)
		if !s.ok {
			break
		}
		best = rate
	}
	return best, steps
}

func TestProbeVsVegeta(t *testing.T) {
	srv := target()
	defer srv.Close()
	t.Logf("GOMAXPROCS %d, %s %s/%s", runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH)

	// 1,000 req/s for 60 s: achieved rate and memory.
	const rate, d = 1000.0, 60 * time.Second
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(250 * time.Millisecond):
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc)
				}
			}
		}
	}()
	o, res := runProbe(srv.URL, rate, d)
	close(stop)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	retained := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	n := len(res.Records)
	fmt.Printf("\nprobe 1000/s x 60s: sent %d of %d, achieved %.2f/s (%.3f%% off), send lag p99 %v, failed %d\n",
		n, o.planned, o.achieved(), o.schedErr(rate)*100, o.lagP99(), o.failures)
	fmt.Printf("probe memory: heap retained after GC %.2f MB (%.1f B/request, records %d B each), peak heap %.2f MB, allocated %.1f MB total (%.0f B/request)\n",
		float64(retained)/1e6, float64(retained)/float64(n), 32, float64(peak.Load()-before.HeapAlloc)/1e6,
		float64(after.TotalAlloc-before.TotalAlloc)/1e6, float64(after.TotalAlloc-before.TotalAlloc)/float64(n))
	runtime.KeepAlive(res)

	vo := runVegeta(srv.URL, rate, d)
	fmt.Printf("vegeta 1000/s x 60s: sent %d of %d, achieved %.2f/s (%.3f%% off), send lag p99 %v, failed %d\n",
		len(vo.sent), vo.planned, vo.achieved(), vo.schedErr(rate)*100, vo.lagP99(), vo.failures)

	// The 60 s run goes first so its heap measurement starts clean. Each ladder then runs whole.
	probeBest, probeSteps := search("probe", t, func(rate float64) outcome { o, _ := runProbe(srv.URL, rate, trial); return o })
	vegetaBest, vegetaSteps := search("vegeta", t, func(rate float64) outcome { return runVegeta(srv.URL, rate, trial) })

	fmt.Printf("\n| rate/s | probe achieved/s | probe sched err | probe lag p99 | vegeta achieved/s | vegeta sched err | vegeta lag p99 |\n|---|---|---|---|---|---|---|\n")
	for i := range max(len(probeSteps), len(vegetaSteps)) {
		cell := func(s []step) string {
			if i >= len(s) {
				return "| (not run) | | "
			}
			return fmt.Sprintf("| %.1f | %.3f%% | %v ", s[i].achieved, s[i].schedErr*100, s[i].lagP99)
		}
		fmt.Printf("| %.0f %s%s|\n", ladder[i], cell(probeSteps), cell(vegetaSteps))
	}
	fmt.Printf("\nhighest sustained rate (<= 1%% schedule error, %v trials): probe %.0f/s, vegeta %.0f/s, ratio %.2f\n",
		trial, probeBest, vegetaBest, probeBest/math.Max(vegetaBest, 1))

	if o.schedErr(rate) > maxSchedErr {
		t.Errorf("probe at 1000/s for 60s: schedule error %.3f%% > 1%%", o.schedErr(rate)*100)
	}
	if o.failures != 0 {
		t.Errorf("probe at 1000/s for 60s: %d requests failed against a local server that always answers 200", o.failures)
	}
	// The target: the probe sustains at least 0.8 of what vegeta sustains on this machine.
	if probeBest < 0.8*vegetaBest {
		t.Errorf("probe sustained %.0f/s, vegeta %.0f/s: ratio %.2f < 0.8", probeBest, vegetaBest, probeBest/math.Max(vegetaBest, 1))
	}
}
