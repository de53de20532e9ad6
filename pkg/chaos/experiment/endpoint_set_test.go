package experiment

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
)

// probeFor probes set at 200/s for d.
func probeFor(t *testing.T, set probe.Endpoints, d time.Duration) *probe.Result {
	t.Helper()
	cfg := probe.Config{Rate: 200}
	if err := cfg.Validate(d); err != nil {
		t.Fatal(err)
	}
	return probe.New(cfg, set).Run(context.Background(), d)
}

func byClass(res *probe.Result) map[probe.Class]int {
	m := map[probe.Class]int{}
	for _, r := range res.Records {
		m[r.Class]++
	}
	return m
}

func TestSetSpreadsAndFollowsChanges(t *testing.T) {
	var hits [3]atomic.Int64
	var urls [3]string
	for i := range 3 {
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits[i].Add(1) }))
		defer srv.Close()
		urls[i] = srv.URL
	}
	set := NewEndpointSet(RoundRobin, 1)
	set.AddEndpoint(probe.Target{Name: "head", BaseURL: urls[0]})
	set.AddEndpoint(probe.Target{Name: "worker", BaseURL: urls[1]})
	res := probeFor(t, set, 100*time.Millisecond)
	perEndpoint := map[string]int{}
	for _, r := range res.Records {
		perEndpoint[res.Endpoints[r.Endpoint]]++
	}
	if perEndpoint["head"] != 10 || perEndpoint["worker"] != 10 || hits[0].Load() != 10 || hits[1].Load() != 10 {
		t.Fatalf("per endpoint %v, server hits %d %d", perEndpoint, hits[0].Load(), hits[1].Load())
	}

	// The head goes, a new worker comes: later requests follow without a restart.
	set.RemoveEndpoint("head")
	set.AddEndpoint(probe.Target{Name: "worker-2", BaseURL: urls[2]})
	if names := set.Names(); len(names) != 2 || names[0] != "worker" || names[1] != "worker-2" {
		t.Fatalf("names %v", names)
	}
	res = probeFor(t, set, 100*time.Millisecond)
	if hits[0].Load() != 10 || hits[1].Load() != 20 || hits[2].Load() != 10 {
		t.Fatalf("hits after change %d %d %d, want 10 20 10", hits[0].Load(), hits[1].Load(), hits[2].Load())
	}
	if len(res.Endpoints) != 2 {
		t.Fatalf("endpoints %v", res.Endpoints)
	}

	set.RemoveEndpoint("worker")
	set.RemoveEndpoint("worker-2")
	res = probeFor(t, set, 50*time.Millisecond)
	if got := byClass(res); got[probe.ClassNoEndpoint] != 10 || len(got) != 1 {
		t.Fatalf("empty set: classes %v, want 10 no-endpoint", got)
	}
	if res.Records[0].Endpoint != probe.NoEndpoint {
		t.Fatalf("endpoint index %d, want NoEndpoint", res.Records[0].Endpoint)
	}
}

func TestRandomPolicyIsSeeded(t *testing.T) {
	pick := func() string {
		s := NewEndpointSet(Random, 42)
		for i := range 4 {
			s.AddEndpoint(probe.Target{Name: strconv.Itoa(i)})
		}
		out := ""
		for i := range 40 {
			tg, _ := s.Pick(uint64(i))
			out += tg.Name
		}
		return out
	}
	a, b := pick(), pick()
	if a != b {
		t.Fatalf("same seed, different picks: %s vs %s", a, b)
	}
	for i := range 4 {
		if !strings.Contains(a, strconv.Itoa(i)) {
			t.Fatalf("endpoint %d never picked in %s", i, a)
		}
	}
}
