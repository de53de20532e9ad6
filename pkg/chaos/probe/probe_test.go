package probe

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tally counts what a test server actually answered, to compare with what the probe recorded.
type tally struct {
	mu sync.Mutex
	m  map[int]int
}

func (t *tally) add(code int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[int]int{}
	}
	t.m[code]++
}

func byStatus(res *Result) map[int]int {
	m := map[int]int{}
	for _, r := range res.Records {
		if r.Class == ClassHTTP {
			m[int(r.Status)]++
		}
	}
	return m
}

func byClass(res *Result) map[Class]int {
	m := map[Class]int{}
	for _, r := range res.Records {
		m[r.Class]++
	}
	return m
}

func run(t *testing.T, cfg Config, eps Endpoints, d time.Duration) *Result {
	t.Helper()
	if err := cfg.Validate(d); err != nil {
		t.Fatal(err)
	}
	return New(cfg, eps).Run(context.Background(), d)
}

func TestStatusCountsMatchServer(t *testing.T) {
	var seen tally
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := 200
		switch k := n.Add(1); {
		case k%5 == 0:
			code = 502
		case k%7 == 0:
			code = 503
		case k%11 == 0:
			code = 404
		}
		seen.add(code)
		w.WriteHeader(code)
		_, _ = io.WriteString(w, "hello")
	}))
	defer srv.Close()

	cfg := Config{Rate: 400}
	d := 500 * time.Millisecond
	if err := cfg.Validate(d); err != nil {
		t.Fatal(err)
	}
	p := New(cfg, NewURL("local", srv.URL))
	res := p.Run(context.Background(), d)
	if len(res.Records) != 200 || res.Interrupted || res.Stopped {
		t.Fatalf("records %d interrupted %v stopped %v, want 200 false false", len(res.Records), res.Interrupted, res.Stopped)
	}
	got := byStatus(res)
	if len(got) != len(seen.m) {
		t.Fatalf("statuses %v, server answered %v", got, seen.m)
	}
	for code, c := range seen.m {
		if got[code] != c {
			t.Errorf("status %d: probe %d, server %d", code, got[code], c)
		}
	}
	if res.Endpoints[0] != "local" {
		t.Errorf("endpoints %v", res.Endpoints)
	}
	// Live counters agree with the records once Run returned.
	var ok, httpErr int64
	for _, r := range res.Records {
		if r.OK() {
			ok++
		} else {
			httpErr++
		}
	}
	if l := p.Live(); l.Sent != 200 || l.Done != 200 || l.OK != ok || l.HTTPErrors != httpErr || l.InFlight != 0 {
		t.Errorf("live counters %+v, want sent and done 200, ok %d, httpErr %d", l, ok, httpErr)
	}
}

func TestScheduleOrderAndOffsets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	res := run(t, Config{Rate: 1000}, NewURL("x", srv.URL), 300*time.Millisecond)
	if len(res.Records) != 300 {
		t.Fatalf("records %d, want 300", len(res.Records))
	}
	var late int
	for i, r := range res.Records {
		if r.Scheduled != scheduledAt(i, 1000) {
			t.Fatalf("record %d scheduled %v, want %v", i, r.Scheduled, scheduledAt(i, 1000))
		}
		if r.Sent < r.Scheduled || r.Latency < r.Sent-r.Scheduled {
			t.Fatalf("record %d: sent %v before schedule %v or latency %v shorter than send lag", i, r.Sent, r.Scheduled, r.Latency)
		}
		if r.Class != ClassHTTP || r.Status != 200 {
			t.Fatalf("record %d: class %v status %d", i, r.Class, r.Status)
		}
		if r.Sent-r.Scheduled > 5*time.Millisecond {
			late++
		}
	}
	// Measured, not asserted: a loaded CI machine may stall the scheduler.
	t.Logf("requests sent more than 5ms late: %d of 300", late)
}

// TestSlowAnswerDoesNotDelayNext: request 0 is held until the server has received request 20.
// A closed-loop prober would deadlock here (and fail on the 5 s guard).
func TestSlowAnswerDoesNotDelayNext(t *testing.T) {
	release := make(chan struct{})
	var n atomic.Int64
	var releasedBySignal atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := n.Add(1)
		if k == 21 {
			close(release)
		}
		if k == 1 {
			select {
			case <-release:
				releasedBySignal.Store(true)
			case <-time.After(5 * time.Second):
			}
			w.WriteHeader(http.StatusGatewayTimeout)
		}
	}))
	defer srv.Close()
	res := run(t, Config{Rate: 200, Timeout: 10 * time.Second}, NewURL("x", srv.URL), 200*time.Millisecond)
	if !releasedBySignal.Load() {
		t.Fatal("the slow first request was not released by later requests: the probe waited for it")
	}
	if got := byStatus(res); got[504] != 1 || got[200] != 39 {
		t.Fatalf("statuses %v, want one 504 and 39 200s", got)
	}
	// The slow one (the 504: the first to reach the server, not always the first scheduled when the
	// machine is loaded) finished after at least 20 other requests were sent.
	slow := -1
	for i, r := range res.Records {
		if r.Status == http.StatusGatewayTimeout {
			slow = i
		}
	}
	slowDone := res.Records[slow].Done()
	sentBefore := 0
	for i, r := range res.Records {
		if i != slow && r.Sent < slowDone {
			sentBefore++
		}
	}
	if sentBefore < 20 {
		t.Fatalf("only %d requests sent before the slow one finished", sentBefore)
	}
}

func TestRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	res := run(t, Config{Rate: 100}, NewURL("gone", "http://"+addr), 100*time.Millisecond)
	if got := byClass(res); got[ClassRefused] != 10 || len(got) != 1 {
		t.Fatalf("classes %v, want 10 refused", got)
	}
}

// hangingServer answers no request: each one, after arrived, waits until its client gives up or
// the test ends.
func hangingServer(t *testing.T, arrived func()) *httptest.Server {
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived()
		select {
		case <-r.Context().Done():
		case <-hold:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hold) })
	return srv
}

func TestTimeout(t *testing.T) {
	srv := hangingServer(t, func() {})
	p := New(Config{Rate: 100, Timeout: 50 * time.Millisecond}, NewURL("slow", srv.URL))
	res := p.Run(context.Background(), 100*time.Millisecond)
	if got := byClass(res); got[ClassTimeout] != 10 || len(got) != 1 {
		t.Fatalf("classes %v, want 10 timeouts", got)
	}
	if l := p.Live(); l.Timeouts != 10 || l.Done != 10 || l.InFlight != 0 {
		t.Fatalf("live %+v", l)
	}
}

func TestReset(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // send RST, not FIN
		}
		conn.Close()
	}))
	defer srv.Close()
	res := run(t, Config{Rate: 100}, NewURL("reset", srv.URL), 100*time.Millisecond)
	if got := byClass(res); got[ClassReset] != 10 || len(got) != 1 {
		t.Fatalf("classes %v, want 10 resets", got)
	}
}

func TestDNS(t *testing.T) {
	// The resolver asks a loopback DNS server that answers NXDOMAIN to everything, so the test
	// goes through Go's real resolver without leaving 127.0.0.0/8.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 512)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if n < 12 {
				continue
			}
			msg := append([]byte(nil), buf[:n]...)
			msg[2] |= 0x80                            // QR: response
			msg[3] = msg[3]&0xf0 | 0x80 | 3           // RA, RCODE 3 NXDOMAIN
			copy(msg[6:12], []byte{0, 0, 0, 0, 0, 0}) // no answer, authority or additional records
			_, _ = pc.WriteTo(msg, addr)
		}
	}()
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
	tr := NewTransport(Config{})
	tr.DialContext = (&net.Dialer{Resolver: resolver}).DialContext
	res := run(t, Config{Rate: 100, Transport: tr}, NewURL("nowhere", "http://kubectl-ray-probe.invalid:8000"), 30*time.Millisecond)
	if got := byClass(res); got[ClassDNS] != 3 || len(got) != 1 {
		t.Fatalf("classes %v, want 3 dns", got)
	}
}

func TestRequestShape(t *testing.T) {
	type seenReq struct{ method, path, body, hdr, host string }
	got := make(chan seenReq, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seenReq{r.Method, r.URL.RequestURI(), string(b), r.Header.Get("X-Probe"), r.Host}
	}))
	defer srv.Close()
	cfg := Config{Rate: 100, Method: "POST", Path: "dummy?x=1", Body: []byte(`{"test":"test"}`),
		Header: http.Header{"X-Probe": {"1"}, "Host": {"svc.example"}}}
	res := run(t, cfg, NewURL("x", srv.URL), 20*time.Millisecond)
	if len(res.Records) != 2 {
		t.Fatalf("records %d", len(res.Records))
	}
	want := seenReq{"POST", "/dummy?x=1", `{"test":"test"}`, "1", "svc.example"}
	for range 2 {
		if r := <-got; r != want {
			t.Fatalf("server saw %+v, want %+v", r, want)
		}
	}
}

// TestCancelReturnsWhatWasSeen: the server holds requests; the test cancels after 5 arrived.
func TestCancelReturnsWhatWasSeen(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	srv := hangingServer(t, func() {
		if n.Add(1) == 5 {
			cancel()
		}
	})
	p := New(Config{Rate: 100, Timeout: 10 * time.Second}, NewURL("x", srv.URL))
	res := p.Run(ctx, 10*time.Second)
	if !res.Interrupted {
		t.Fatal("not marked interrupted")
	}
	// The last progress line counts as the report does: aborted requests are not "requests".
	if l := p.Live(); l.Requests() != 0 || l.Aborted() != int64(len(res.Records)) {
		t.Fatalf("live requests %d aborted %d, want 0 and %d", l.Requests(), l.Aborted(), len(res.Records))
	}
	if len(res.Records) < 5 || len(res.Records) >= 1000 {
		t.Fatalf("records %d, want between 5 and 999", len(res.Records))
	}
	for i, r := range res.Records {
		if r.Class != ClassCanceled {
			t.Fatalf("record %d class %v, want canceled", i, r.Class)
		}
	}
}

func TestStopEndsScheduleGracefully(t *testing.T) {
	var n atomic.Int64
	var p *Prober
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		if n.Add(1) == 5 {
			p.Stop()
		}
	}))
	defer srv.Close()
	p = New(Config{Rate: 100}, NewURL("x", srv.URL))
	res := p.Run(context.Background(), 10*time.Second)
	if !res.Stopped || res.Interrupted {
		t.Fatalf("stopped %v interrupted %v", res.Stopped, res.Interrupted)
	}
	if len(res.Records) < 5 || byStatus(res)[200] != len(res.Records) {
		t.Fatalf("records %d statuses %v: every sent request should finish normally", len(res.Records), byStatus(res))
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		cfg Config
		d   time.Duration
	}{
		{Config{Rate: 0}, time.Second},
		{Config{Rate: -1}, time.Second},
		{Config{Rate: MaxRate + 1}, time.Second},
		{Config{Rate: 10}, 0},
		{Config{Rate: 10, Timeout: -1}, time.Second},
		{Config{Rate: 10000}, time.Hour},
	} {
		if err := c.cfg.Validate(c.d); err == nil {
			t.Errorf("%+v for %v: accepted", c.cfg, c.d)
		}
	}
	if err := (Config{Rate: 50}).Validate(5 * time.Minute); err != nil {
		t.Errorf("50/s for 5m rejected: %v", err)
	}
	if got := Planned(50, 1500*time.Millisecond); got != 75 {
		t.Errorf("Planned(50, 1.5s) = %d, want 75", got)
	}
}

// EndAfter is the schedule's planned end, moved earlier: not an early stop.
func TestEndAfterShortensTheSchedule(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	p := New(Config{Rate: 100}, NewURL("x", srv.URL))
	go func() { time.Sleep(50 * time.Millisecond); p.EndAfter(300 * time.Millisecond) }()
	res := p.Run(context.Background(), 10*time.Second)
	if res.Stopped || res.Interrupted || res.Duration != 300*time.Millisecond || len(res.Records) != 30 {
		t.Fatalf("stopped %v interrupted %v duration %s records %d, want a 300ms schedule of 30", res.Stopped, res.Interrupted, res.Duration, len(res.Records))
	}
	// Past the asked duration it changes nothing.
	p = New(Config{Rate: 100}, NewURL("x", srv.URL))
	p.EndAfter(time.Hour)
	if res := p.Run(context.Background(), 200*time.Millisecond); res.Duration != 200*time.Millisecond || len(res.Records) != 20 {
		t.Fatalf("duration %s records %d, want 200ms and 20", res.Duration, len(res.Records))
	}
}

// TestLiveString: the progress line counts judged requests (the report's "requests"), no-endpoint
// ones included, and names aborted requests apart.
func TestLiveString(t *testing.T) {
	l := Live{Elapsed: 5*time.Second + 170*time.Millisecond, Scheduled: 260, Sent: 253, Done: 256,
		OK: 150, HTTPErrors: 100, ConnErrors: 4, InFlight: 1}
	if got, want := l.String(), "5.1s requests 254 ok 150 errors 104 (http 100, conn 4, timeout 0) in flight 1 aborted 2"; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	l.Done = 254
	if got, want := l.String(), "5.1s requests 254 ok 150 errors 104 (http 100, conn 4, timeout 0) in flight 1"; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// Started waits for Run and returns the start that Live and the Result report, so the engine
// measures its warm-up from the schedule's own start.
func TestStartedIsTheScheduleStart(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	p := New(Config{Rate: 100}, NewURL("x", srv.URL))
	resc := make(chan *Result, 1)
	go func() { resc <- p.Run(context.Background(), 50*time.Millisecond) }()
	start := p.Started()
	if start.IsZero() || !start.Equal(p.Live().Start) {
		t.Fatalf("Started() = %v, Live().Start = %v", start, p.Live().Start)
	}
	if res := <-resc; !res.Start.Equal(start) {
		t.Fatalf("Result.Start = %v, Started() = %v", res.Start, start)
	}
}
