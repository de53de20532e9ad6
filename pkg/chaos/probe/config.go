package probe

import (
	"math"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// Limits on what a probe will attempt. MaxRate is far above what a head-kill test needs and near
// what one loopback client sustains; MaxRequests bounds memory at MaxRequests × 32 bytes (64 MiB).
const (
	MaxRate        = 50000
	MaxRequests    = 1 << 21
	DefaultTimeout = 2 * time.Second
	// DefaultMaxInFlight caps concurrent requests. Past it the schedule slips, which the records
	// show as Sent > Scheduled and as latency; nothing is silently dropped.
	DefaultMaxInFlight = 10000
	// maxBody is read and discarded per response so the connection can be reused.
	maxBody = 1 << 20
)

// Config says what each request looks like and how fast they go.
type Config struct {
	Rate    float64 // requests per second, constant
	Method  string  // default GET
	Path    string  // appended to the target's BaseURL; default "/"
	Body    []byte
	Header  http.Header // a "Host" entry sets the request's Host
	Timeout time.Duration
	// MaxInFlight caps concurrent requests (0: DefaultMaxInFlight).
	MaxInFlight int
	// Transport replaces the default keep-alive transport (the command passes one that reaches
	// port-forwards; tests pass their own). Redirects are never followed either way.
	Transport http.RoundTripper
}

func (c *Config) defaults() {
	if c.Method == "" {
		c.Method = http.MethodGet
	}
	if c.Path == "" {
		c.Path = "/"
	}
	if !strings.HasPrefix(c.Path, "/") {
		c.Path = "/" + c.Path
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
}

// NewTransport is a keep-alive transport sized for cfg: idle connections are kept for every
// possible in-flight request so a steady rate reuses them instead of dialing. No proxy from the
// environment: the probe must hit exactly the target it reports on.
func NewTransport(cfg Config) *http.Transport {
	cfg.defaults()
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: cfg.MaxInFlight,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

// Validate rejects settings the probe cannot honour for a run of duration d.
func (c Config) Validate(d time.Duration) error {
	switch {
	case math.IsNaN(c.Rate) || c.Rate <= 0:
		return invalid("rate %v is not positive: use e.g. %s 50/s", c.Rate, setRate)
	case c.Rate > MaxRate:
		return invalid("rate %v/s is above the probe's limit of %d/s: lower %s", c.Rate, MaxRate, setRate)
	case d <= 0:
		return invalid("probe duration %v is not positive: give a duration such as 60s", d)
	case c.Timeout < 0:
		return invalid("request timeout %v is negative: use e.g. %s 2s", c.Timeout, setRequestTimeout)
	case c.MaxInFlight < 0:
		return invalid("max in-flight %d is negative", c.MaxInFlight)
	}
	if n := Planned(c.Rate, d); n > MaxRequests {
		return invalid("%d requests (%v/s for %v) exceed the probe's limit of %d: lower %s or the duration", n, c.Rate, d, MaxRequests, setRate)
	}
	return nil
}

// The settings of the experiment that runs the probe, named in messages.
const (
	setRate           fault.Field = "rate"
	setRequestTimeout fault.Field = "request-timeout"
)

func invalid(format string, args ...any) error { return fault.Errorf(fault.Invalid, format, args...) }

// Planned is how many requests a run of d at rate schedules: those with Seq/rate < d.
func Planned(rate float64, d time.Duration) int {
	return int(math.Ceil(d.Seconds()*rate - 1e-9))
}

// scheduledAt is the open-loop schedule: request seq is due seq/rate after the start.
func scheduledAt(seq int, rate float64) time.Duration {
	return time.Duration(float64(seq) * float64(time.Second) / rate)
}
