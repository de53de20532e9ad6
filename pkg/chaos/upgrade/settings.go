// Package upgrade runs a zero-downtime upgrade of a RayService under head-kill's probe: it
// patches the RayService (a new image, or the user's JSON merge patch) so that KubeRay starts a
// new RayCluster, follows KubeRay's steps (pending cluster, its head Ready, its Serve apps
// RUNNING, the switch of the active cluster, the old cluster deleted) and reports what clients
// saw through the serve Service. It never reverts the upgrade.
package upgrade

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/headkill"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
)

// The settings messages name; the command shows each as its flag. The probe's are head-kill's.
const (
	SetImage   chaos.Setting = "image"
	SetPatch   chaos.Setting = "patch"
	SetTimeout chaos.Setting = "timeout"
)

// Settings is one upgrade: what to change, what to probe, for how long, and the SLO.
type Settings struct {
	Namespace  string
	RayService string
	// Image sets the image of the Ray container (KubeRay's container 0) of the head and every
	// worker group; Patch is a JSON merge patch of the RayService. Exactly one is set.
	Image string
	Patch string

	Port    int // of the serve Service; headkill.DefaultServePort when 0
	Path    string
	Method  string
	Headers []string // K:V
	Rate    string   // 50, 50/s or 600/m

	Warmup time.Duration
	// Timeout bounds the probe's whole schedule: the warm-up, the patch and the wait for the
	// switch and the old cluster's deletion.
	Timeout        time.Duration
	RequestTimeout time.Duration

	MaxErrors          int64
	MaxErrorsSet       bool
	MinAvailability    float64
	MinAvailabilitySet bool

	// DryRun: only plan, and have the API server dry-run the patch (DryRun, not Run).
	DryRun        bool
	Progress      func(l probe.Live, state string)
	ProgressEvery time.Duration
	// Confirm is asked before the patch; an error stops the run with nothing changed.
	Confirm chaos.Confirm
	// Interrupts wraps the context of the run from the watches on (Ctrl-C ends the probe, and the
	// report of what was seen is still built).
	Interrupts func(context.Context) (context.Context, context.CancelFunc)
	Warn       io.Writer
	Now        func() time.Time

	probeCfg probe.Config // set by Validate
}

func invalid(format string, args ...any) error { return chaos.Errorf(chaos.Invalid, format, args...) }

// Validate checks every setting before the API is touched: bad input changes nothing.
func (s *Settings) Validate() error {
	switch {
	case s.Image == "" && s.Patch == "":
		return invalid("say what to change: %s IMAGE or %s JSON-MERGE-PATCH", SetImage, SetPatch)
	case s.Image != "" && s.Patch != "":
		return invalid("%s and %s exclude each other: give one", SetImage, SetPatch)
	case strings.ContainsAny(s.Image, " \t\n"):
		return invalid("%s %q has white space in it: give an image reference, e.g. rayproject/ray:2.46.0", SetImage, s.Image)
	}
	if s.Patch != "" {
		var obj map[string]any
		if err := json.Unmarshal([]byte(s.Patch), &obj); err != nil || len(obj) == 0 {
			return invalid("%s is not a JSON object (a JSON merge patch of the RayService), e.g. %s '{\"spec\":{\"rayClusterConfig\":{\"rayVersion\":\"2.46.0\"}}}'", SetPatch, SetPatch)
		}
	}
	rate, err := headkill.ParseRate(s.Rate)
	if err != nil {
		return err
	}
	switch {
	case s.Warmup <= 0:
		return invalid("%s must be positive (the RayService is patched only after a healthy warm-up), e.g. %s 10s", headkill.SetWarmup, headkill.SetWarmup)
	case float64(s.Warmup)/float64(time.Second)*rate < 1:
		return invalid("%s %s at %s %s sends no request: lengthen the warm-up or raise the rate", headkill.SetWarmup, s.Warmup, headkill.SetRate, s.Rate)
	case s.RequestTimeout <= 0:
		return invalid("%s must be positive, e.g. %s 2s", headkill.SetRequestTimeout, headkill.SetRequestTimeout)
	case s.post() <= 0:
		return invalid("%s %s leaves no time after the patch (the warm-up, a request timeout and %s for the patch come first): raise it, e.g. %s 10m",
			SetTimeout, s.Timeout, headkill.KillSlack, SetTimeout)
	case s.ProgressEvery <= 0:
		return invalid("%s must be positive", headkill.SetProgressEvery)
	case s.MaxErrorsSet && s.MaxErrors < 0:
		return invalid("%s must be 0 or more, not %d", headkill.SetMaxErrors, s.MaxErrors)
	case s.MinAvailabilitySet && (math.IsNaN(s.MinAvailability) || s.MinAvailability < 0 || s.MinAvailability > 100):
		return invalid("%s is a percentage from 0 to 100, not %v", headkill.SetMinAvailability, s.MinAvailability)
	case s.Port < 0 || s.Port > 65535:
		return invalid("%s must be from 1 to 65535, not %d", headkill.SetPort, s.Port)
	}
	header := http.Header{}
	for i, h := range s.Headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return invalid("%s number %d is not K:V, e.g. %s 'Content-Type: application/json'", headkill.SetHeader, i+1, headkill.SetHeader)
		}
		header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	if s.Port == 0 {
		s.Port = headkill.DefaultServePort
	}
	s.probeCfg = probe.Config{Rate: rate, Method: strings.ToUpper(s.Method), Path: s.Path, Header: header, Timeout: s.RequestTimeout}
	return s.probeCfg.Validate(s.Timeout)
}

// post is how long the probe may run after the patch: --timeout less what comes before it.
func (s *Settings) post() time.Duration {
	return s.Timeout - headkill.ScheduleLength(s.Warmup, s.RequestTimeout, 0)
}
