package experiment

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// The settings of the probe that messages name; the command shows each as its flag.
const (
	SetRate            fault.Field = "rate"
	SetWarmup          fault.Field = "warmup"
	SetRequestTimeout  fault.Field = "request-timeout"
	SetProgressEvery   fault.Field = "progress-interval"
	SetMaxErrors       fault.Field = "max-errors"
	SetMinAvailability fault.Field = "min-availability"
	SetPort            fault.Field = "port"
	SetPath            fault.Field = "path"
	SetHeader          fault.Field = "header"
)

// DefaultServePort is the port of a RayService's serve Service (<name>-serve-svc).
const DefaultServePort = 8000

// ProbeSettings are what every experiment run under the probe shares (head-kill, and chaos
// upgrade, which embed them): the requests, the warm-up, the SLO, and the command's hooks.
type ProbeSettings struct {
	Path    string
	Method  string
	Data    string
	Headers []string // K:V
	Rate    string   // 50, 50/s or 600/m

	Warmup         time.Duration
	RequestTimeout time.Duration

	MaxErrors          int64
	MaxErrorsSet       bool
	MinAvailability    float64
	MinAvailabilitySet bool

	// DryRun: only plan, and have the API server dry-run the disruptive step (DryRun, not Run).
	DryRun bool
	// Progress is called every ProgressEvery with the probe's counters and the cluster's state.
	Progress      func(l probe.Live, state string)
	ProgressEvery time.Duration
	// Confirm is asked before the disruptive step; an error stops the run with nothing changed.
	Confirm chaos.Confirm
	// Interrupts wraps the context of the run itself (from the watches on): the command ends it on
	// Ctrl-C, so the report of what was seen is still built. Before that, Ctrl-C ends the process.
	Interrupts func(context.Context) (context.Context, context.CancelFunc)
	// Warn hears what the run can go on without (no doctor advice, a watch that ended).
	Warn io.Writer
	Now  func() time.Time
}

// Defaults fills the hooks a caller may leave nil.
func (p *ProbeSettings) Defaults() {
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Warn == nil {
		p.Warn = io.Discard
	}
}

func invalid(format string, args ...any) error { return fault.Errorf(fault.Invalid, format, args...) }

// ValidateProbe checks the probe's settings, once the experiment checked its own: guarded is what
// a healthy warm-up guards ("the head is killed"), path the path to probe, and post how long the
// probe runs after the step, so its caps (rate × duration) hold for the whole Schedule. It
// changes nothing.
func (p *ProbeSettings) ValidateProbe(guarded, path string, post time.Duration) error {
	rate, err := ParseRate(p.Rate)
	if err != nil {
		return err
	}
	switch {
	case p.Warmup <= 0:
		return invalid("%s must be positive (%s only after a healthy warm-up), e.g. %s 10s", SetWarmup, guarded, SetWarmup)
	case float64(p.Warmup)/float64(time.Second)*rate < 1:
		return invalid("%s %s at %s %s sends no request: lengthen the warm-up or raise the rate", SetWarmup, p.Warmup, SetRate, p.Rate)
	case p.RequestTimeout <= 0:
		return invalid("%s must be positive, e.g. %s 2s", SetRequestTimeout, SetRequestTimeout)
	case p.ProgressEvery <= 0:
		return invalid("%s must be positive", SetProgressEvery)
	case p.MaxErrorsSet && p.MaxErrors < 0:
		return invalid("%s must be 0 or more, not %d", SetMaxErrors, p.MaxErrors)
	case p.MinAvailabilitySet && (math.IsNaN(p.MinAvailability) || p.MinAvailability < 0 || p.MinAvailability > 100):
		return invalid("%s is a percentage from 0 to 100, not %v", SetMinAvailability, p.MinAvailability)
	}
	for i, h := range p.Headers {
		if k, _, ok := strings.Cut(h, ":"); !ok || strings.TrimSpace(k) == "" {
			// The value is not echoed: a header is where tokens go.
			return invalid("%s number %d is not K:V, e.g. %s 'Content-Type: application/json'", SetHeader, i+1, SetHeader)
		}
	}
	return p.Config(path).Validate(p.Schedule(post))
}

// ValidateAt is ValidateProbe for a probe of target: a URL's own path, else Path.
func (p *ProbeSettings) ValidateAt(guarded, target string, post time.Duration) error {
	path, err := TargetPath(target, p.Path)
	if err != nil {
		return err
	}
	return p.ValidateProbe(guarded, path, post)
}

// ConfigAt is Config for a probe of target, from settings ValidateAt accepted.
func (p *ProbeSettings) ConfigAt(target string) probe.Config {
	path, _ := TargetPath(target, p.Path)
	return p.Config(path)
}

// Schedule is how long the probe may run when it runs post after the step: the warm-up, the
// drain of its last requests, room for the step, and post.
func (p *ProbeSettings) Schedule(post time.Duration) time.Duration {
	return scheduleLength(p.Warmup, p.RequestTimeout, post)
}

// Config is the probe's configuration for path, from settings ValidateProbe accepted.
func (p *ProbeSettings) Config(path string) probe.Config {
	rate, _ := ParseRate(p.Rate)
	header := http.Header{}
	for _, h := range p.Headers {
		if k, v, ok := strings.Cut(h, ":"); ok && strings.TrimSpace(k) != "" {
			header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	cfg := probe.Config{Rate: rate, Method: strings.ToUpper(p.Method), Path: path, Header: header, Timeout: p.RequestTimeout}
	if p.Data != "" {
		cfg.Body = []byte(p.Data)
	}
	return cfg
}

// SLO is what the run must hold.
func (p *ProbeSettings) SLO() availability.SLO {
	var slo availability.SLO
	if p.MaxErrorsSet {
		slo.MaxErrors = &p.MaxErrors
	}
	if p.MinAvailabilitySet {
		slo.MinAvailability = &p.MinAvailability
	}
	return slo
}

// PlanSLO is the SLO as a dry-run plan shows it.
func (p *ProbeSettings) PlanSLO() availability.PlanSLO {
	slo := p.SLO()
	return availability.PlanSLO{MaxErrors: slo.MaxErrors, MinAvailability: slo.MinAvailability}
}

// Ask asks Confirm before action, which happens while the probe runs against target.
func (p *ProbeSettings) Ask(action, target string) error {
	rate, _ := ParseRate(p.Rate)
	return p.Confirm.Ask(chaos.Confirmation{Action: action, While: fmt.Sprintf("probing %s at %v/s", target, rate)})
}

// ParseRate reads 50, 50/s, 3000/m.
func ParseRate(v string) (float64, error) {
	num, unit, _ := strings.Cut(strings.TrimSpace(v), "/")
	per := 1.0
	switch unit {
	case "", "s", "sec", "1s":
	case "m", "min", "1m":
		per = 60
	default:
		return 0, invalid("%s %q: use requests per second or minute, e.g. 50/s or 600/m", SetRate, v)
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, invalid("%s %q is not a number of requests, e.g. 50/s", SetRate, v)
	}
	r := n / per
	switch {
	case r <= 0:
		return 0, invalid("%s %q is not positive: use e.g. %s 50/s", SetRate, v, SetRate)
	case r > probe.MaxRate:
		return 0, invalid("%s %q is above the probe's limit of %d/s: lower %s", SetRate, v, probe.MaxRate, SetRate)
	}
	return r, nil
}

// ShownPath is the probed path as plans and reports print it: "/" when empty, and the value of
// any query parameter named like a secret (token, api_key, password, key, sig...) replaced,
// since reports are kept as CI artifacts. The probe itself sends the path as given.
func ShownPath(p string) string {
	if p == "" {
		return "/"
	}
	path, query, ok := strings.Cut(p, "?")
	if !ok {
		return p
	}
	params := strings.Split(query, "&")
	for i, kv := range params {
		k, _, hasValue := strings.Cut(kv, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasValue && (redact.IsSecretName(name) || secretParams[strings.ToLower(name)]) {
			params[i] = k + "=" + redact.Redacted
		}
	}
	return path + "?" + strings.Join(params, "&")
}

// secretParams are query parameter names that carry credentials without saying so.
var secretParams = map[string]bool{"key": true, "sig": true, "signature": true, "code": true}
