package experiment

import (
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{"50": 50, "50/s": 50, "600/m": 10, " 2.5/s ": 2.5} {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1/s", "5/h", "NaN", "1e9"} {
		if _, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) accepted", in)
		}
	}
}

// ValidateProbe only checks: a second call sees the same settings, and Config is built from them
// alone.
func TestValidateProbeChangesNothing(t *testing.T) {
	p := ProbeSettings{Rate: "600/m", Method: "post", Headers: []string{"X-A: 1"}, Data: "{}", Warmup: 1e9, RequestTimeout: 2e9, ProgressEvery: 1e9}
	before := p
	if err := p.ValidateProbe("the step is taken", "/p", 5e9); err != nil {
		t.Fatal(err)
	}
	if p.Rate != before.Rate || p.Method != before.Method || len(p.Headers) != 1 {
		t.Fatalf("ValidateProbe changed the settings: %+v", p)
	}
	cfg := p.Config("/p")
	if cfg.Rate != 10 || cfg.Method != "POST" || cfg.Header.Get("X-A") != "1" || string(cfg.Body) != "{}" || cfg.Path != "/p" || cfg.Timeout != 2e9 {
		t.Fatalf("config %+v", cfg)
	}
	p.Headers = []string{"no colon secret"}
	if err := p.ValidateProbe("the step is taken", "/p", 5e9); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("a bad header: %v (the value must not be echoed)", err)
	}
}

// Reports are kept as CI artifacts: a query parameter named like a secret is shown redacted; the
// rest of the path is shown as probed.
func TestShownPathRedactsSecretQueryValues(t *testing.T) {
	for in, want := range map[string]string{
		"":                                  "/",
		"/predict":                          "/predict",
		"/predict?model=v2":                 "/predict?model=v2",
		"/predict?api_key=s3cr3t&model=v2":  "/predict?api_key=[redacted]&model=v2",
		"/p?token=a&Sig=b&access_token=c&x": "/p?token=[redacted]&Sig=[redacted]&access_token=[redacted]&x",
		"/p?pass%77ord=s3cr3t":              "/p?pass%77ord=[redacted]",
	} {
		if got := ShownPath(in); got != want {
			t.Errorf("ShownPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// The schedule ValidateProbe checks the probe's caps against is the one Run will plan, for a
// fixed time after the step and for a wait for recovery alike.
func TestScheduleIsWhatRunPlans(t *testing.T) {
	p := ProbeSettings{Rate: "50", Warmup: 10 * time.Second, RequestTimeout: 2 * time.Second}
	for _, d := range []Disruption{
		{Probe: p.Config("/"), Warmup: p.Warmup, After: time.Minute},
		{Probe: p.Config("/"), Warmup: p.Warmup, UntilRecovered: true, Timeout: 5 * time.Minute},
	} {
		if got, want := p.Schedule(d.post()), d.Duration(); got != want {
			t.Errorf("Schedule = %v, Run plans %v", got, want)
		}
	}
	if got := p.Schedule(time.Minute); got <= 72*time.Second {
		t.Errorf("Schedule(1m) = %v: it must hold the warm-up, a request timeout and the step's room too", got)
	}
}
