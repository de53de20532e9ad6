package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads addr's /metrics with Prometheus' own exposition-format parser.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scraping %s: %v", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scraping %s: %s", addr, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s/metrics: %v", addr, err)
	}
	return mfs
}

// sample is the value of the series of family name with exactly the labels given as
// name=value pairs (a histogram's sample count); ok is false when there is no such series.
func sample(mfs map[string]*dto.MetricFamily, name string, labels ...string) (v float64, ok bool) {
	mf := mfs[name]
	if mf == nil {
		return 0, false
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
next:
	for _, m := range mf.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		for _, lp := range m.GetLabel() {
			if want[lp.GetName()] != lp.GetValue() {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// wantSample fails unless the series has value want (a missing series reads 0).
func wantSample(t *testing.T, mfs map[string]*dto.MetricFamily, want float64, name string, labels ...string) {
	t.Helper()
	if got, _ := sample(mfs, name, labels...); got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

// waitSample scrapes addr until the series has value want, and returns that scrape.
func waitSample(t *testing.T, addr string, timeout time.Duration, want float64, name string, labels ...string) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		mfs := scrape(t, addr)
		if got, _ := sample(mfs, name, labels...); got == want || time.Now().After(deadline) {
			return mfs
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// probeStatus is the HTTP status of addr's path, or 0 when it does not answer, with the body.
func probeStatus(addr, path string) (int, string) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// waitProbe waits until addr's path answers code, and returns its body.
func waitProbe(t *testing.T, addr, path string, code int, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var got int
	var body string
	for time.Now().Before(deadline) {
		if got, body = probeStatus(addr, path); got == code {
			return body
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s%s: still %d %q after %s, want %d", addr, path, got, body, timeout, code)
	return ""
}

func (w *watchdog) metricsAddr(timeout time.Duration) string {
	rec := w.WaitRecord("the metrics line", timeout, "msg", "serving metrics and probes")
	if rec["address"] == "" {
		w.t.Fatal(fmt.Sprintf("no address in %v", rec))
	}
	return rec["address"]
}
