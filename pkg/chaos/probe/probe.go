// Package probe is an open-loop constant-rate HTTP prober: request i is due at i/rate after the
// start whatever happened to earlier requests, its latency counts from that due time, and every
// request is kept as a 32-byte Record for the report.
package probe

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// chunkSize records are allocated at a time so workers can hold stable pointers into storage that
// grows only as far as the run actually got.
const chunkSize = 4096

// Prober runs one probe. Create it with New, call Run once.
type Prober struct {
	cfg    Config
	eps    Endpoints
	client *http.Client

	stop     chan struct{}
	stopOnce sync.Once
	// endAt, when set (> 0), shortens the schedule to requests due before it (from the start).
	endAt atomic.Int64

	live  counters
	start atomic.Pointer[time.Time]
	// started is closed once Run has set start.
	started chan struct{}

	// Owned by the scheduler goroutine.
	chunks  [][]Record
	names   []string
	nameIdx map[string]uint16
}

// counters are the live totals behind the progress line.
type counters struct {
	scheduled, sent, done, ok, httpErr, connErr, timeouts, inFlight atomic.Int64
}

// Live is a consistent-enough snapshot for a progress line (each counter is read atomically, not
// all together).
type Live struct {
	Start                 time.Time // zero until Run starts
	Elapsed               time.Duration
	Scheduled, Sent, Done int64
	OK, HTTPErrors        int64 // HTTPErrors: answers with status >= 400
	ConnErrors, Timeouts  int64 // ConnErrors: refused, reset, dns, other, no endpoint
	InFlight              int64
}

// Errors is every finished request that was not OK.
func (l Live) Errors() int64 { return l.HTTPErrors + l.ConnErrors + l.Timeouts }

// Result is everything a run saw.
type Result struct {
	Start       time.Time     // wall and monotonic time of Seq 0's schedule
	Rate        float64       // asked requests per second
	Duration    time.Duration // asked run length
	Elapsed     time.Duration // from Start until the last request finished
	Interrupted bool          // ctx was canceled before the schedule ended
	Stopped     bool          // Stop ended the schedule early
	// Records are in schedule order: Records[i] is Seq i.
	Records []Record
	// Endpoints names Record.Endpoint indexes.
	Endpoints []string
}

// New checks nothing beyond defaults; call cfg.Validate first for user input.
func New(cfg Config, eps Endpoints) *Prober {
	cfg.defaults()
	rt := cfg.Transport
	if rt == nil {
		rt = NewTransport(cfg)
	}
	return &Prober{
		cfg: cfg,
		eps: eps,
		client: &http.Client{
			Transport:     rt,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		stop:    make(chan struct{}),
		started: make(chan struct{}),
		nameIdx: map[string]uint16{},
	}
}

// Stop ends the schedule early (e.g. once recovery is seen); requests in flight finish normally.
func (p *Prober) Stop() { p.stopOnce.Do(func() { close(p.stop) }) }

// EndAfter ends the schedule at d after its start: requests due from then on are not sent. It
// is the schedule's planned end, not an early stop (Result.Duration becomes d, Stopped stays
// false); it only shortens, so a d past the asked duration changes nothing. A head kill sets it
// once the kill is done, so the time after the kill is what was asked however long the warm-up
// took to drain and the kill to land.
func (p *Prober) EndAfter(d time.Duration) {
	if d > 0 {
		p.endAt.Store(int64(d))
	}
}

// Started waits until Run has started the schedule and returns its start (Seq 0's due time).
func (p *Prober) Started() time.Time {
	<-p.started
	return *p.start.Load()
}

// Live reads the counters; safe to call from any goroutine at any time.
func (p *Prober) Live() Live {
	l := Live{
		Scheduled:  p.live.scheduled.Load(),
		Sent:       p.live.sent.Load(),
		Done:       p.live.done.Load(),
		OK:         p.live.ok.Load(),
		HTTPErrors: p.live.httpErr.Load(),
		ConnErrors: p.live.connErr.Load(),
		Timeouts:   p.live.timeouts.Load(),
		InFlight:   p.live.inFlight.Load(),
	}
	if s := p.start.Load(); s != nil {
		l.Start = *s
		l.Elapsed = time.Since(*s)
	}
	return l
}

type job struct {
	rec *Record
	url string
}

// Run sends Planned(rate, d) requests on schedule and returns when the last one has finished.
// Canceling ctx stops scheduling and aborts requests in flight (recorded as ClassCanceled); the
// Result then holds what was seen up to that point.
func (p *Prober) Run(ctx context.Context, d time.Duration) *Result {
	n := Planned(p.cfg.Rate, d)

	var wg sync.WaitGroup
	jobs := make(chan job)
	workers := 0
	worker := func(start time.Time, first job) {
		defer wg.Done()
		p.do(ctx, start, first)
		for j := range jobs {
			p.do(ctx, start, j)
		}
	}

	start := time.Now()
	p.start.Store(&start)
	close(p.started)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	res := &Result{Start: start, Rate: p.cfg.Rate, Duration: d}

	count := 0
schedule:
	for ; count < n; count++ {
		due := scheduledAt(count, p.cfg.Rate)
		if wait := due - time.Since(start); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				break schedule
			case <-p.stop:
				timer.Stop()
				res.Stopped = true
				break schedule
			}
		} else {
			select {
			case <-ctx.Done():
				break schedule
			case <-p.stop:
				res.Stopped = true
				break schedule
			default:
			}
		}
		// Checked after the wait: EndAfter may have been called during it.
		if end := time.Duration(p.endAt.Load()); end > 0 && due >= end {
			if end < res.Duration {
				res.Duration = end
			}
			break
		}
		rec := p.slot(count)
		rec.Scheduled = due
		p.live.scheduled.Add(1)
		t, ok := p.eps.Pick(uint64(count))
		if !ok {
			rec.Sent = time.Since(start)
			rec.Class = ClassNoEndpoint
			rec.Endpoint = NoEndpoint
			p.count(rec)
			continue
		}
		rec.Endpoint = p.intern(t.Name)
		j := job{rec: rec, url: t.BaseURL + p.cfg.Path}
		// Hand the job to an idle worker; if none is idle, start one, so a slow answer never
		// holds up the next send. Only at MaxInFlight does the schedule wait.
		select {
		case jobs <- j:
			continue
		default:
		}
		if workers < p.cfg.MaxInFlight {
			workers++
			wg.Add(1)
			go worker(start, j)
			continue
		}
		select {
		case jobs <- j:
		case <-ctx.Done():
			rec.Sent = time.Since(start)
			rec.Class = ClassCanceled
			p.count(rec)
			count++
			break schedule
		}
	}
	close(jobs)
	wg.Wait()

	res.Interrupted = ctx.Err() != nil && count < n
	res.Elapsed = time.Since(start)
	res.Records = make([]Record, count)
	for i := range res.Records {
		res.Records[i] = p.chunks[i/chunkSize][i%chunkSize]
	}
	p.chunks = nil
	res.Endpoints = p.names
	return res
}

func (p *Prober) slot(i int) *Record {
	c := i / chunkSize
	if c == len(p.chunks) {
		p.chunks = append(p.chunks, make([]Record, chunkSize))
	}
	return &p.chunks[c][i%chunkSize]
}

// intern gives each endpoint name a small index; past 65,534 names the rest share NoEndpoint.
func (p *Prober) intern(name string) uint16 {
	if i, ok := p.nameIdx[name]; ok {
		return i
	}
	if len(p.names) >= int(NoEndpoint) {
		return NoEndpoint
	}
	i := uint16(len(p.names))
	p.names = append(p.names, name)
	p.nameIdx[name] = i
	return i
}

// do sends one request and fills its record. It is the only writer of rec after dispatch.
func (p *Prober) do(ctx context.Context, start time.Time, j job) {
	rec := j.rec
	p.live.inFlight.Add(1)
	defer p.live.inFlight.Add(-1)

	rctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	var body io.Reader
	if p.cfg.Body != nil {
		body = bytes.NewReader(p.cfg.Body)
	}
	req, err := http.NewRequestWithContext(rctx, p.cfg.Method, j.url, body)
	if err == nil {
		req.Header = p.cfg.Header.Clone()
		if req.Header == nil {
			req.Header = http.Header{}
		}
		if h := req.Header.Get("Host"); h != "" {
			req.Host = h
			req.Header.Del("Host")
		}
	}

	rec.Sent = time.Since(start)
	p.live.sent.Add(1)
	if err == nil {
		var resp *http.Response
		resp, err = p.client.Do(req)
		if err == nil {
			rec.Status = uint16(resp.StatusCode)
			_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
			resp.Body.Close()
		}
	}
	rec.Latency = time.Since(start) - rec.Scheduled
	switch {
	case err == nil:
		rec.Class = ClassHTTP
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		rec.Class = ClassCanceled
	default:
		rec.Class = classify(err)
	}
	p.count(rec)
}

func (p *Prober) count(rec *Record) {
	// done last, and Live reads it first: a progress line never shows a judged request as aborted.
	defer p.live.done.Add(1)
	switch rec.Outcome() {
	case Succeeded:
		p.live.ok.Add(1)
	case HTTPError:
		p.live.httpErr.Add(1)
	case TimedOut:
		p.live.timeouts.Add(1)
	case ConnError:
		p.live.connErr.Add(1)
	}
}

// Close drops the idle kept-alive connections so a finished probe holds no sockets (port-forwards
// can then be torn down cleanly). Call it after Run.
func (p *Prober) Close() { p.client.CloseIdleConnections() }
