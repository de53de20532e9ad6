// Package upgrade runs a zero-downtime upgrade of a RayService under the probe of pkg/chaos/experiment: it
// patches the RayService (a new image, or the user's JSON merge patch) so that KubeRay starts a
// new RayCluster, follows KubeRay's steps (pending cluster, its head Ready, its Serve apps
// RUNNING, the switch of the active cluster, the old cluster deleted) and reports what clients
// saw through the serve Service. It never reverts the upgrade.
package upgrade

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// The settings messages name; the command shows each as its flag. The probe's are
// experiment's.
const (
	SetImage   fault.Field = "image"
	SetPatch   fault.Field = "patch"
	SetTimeout fault.Field = "timeout"
	// SetGatewayService names the Service in front of the Gateway's data plane (an incremental
	// upgrade's probe target), when no Service carries the Gateway's name label.
	SetGatewayService fault.Field = "gateway-service"
)

// Settings is one upgrade: what to change, what to probe, for how long, and the SLO.
type Settings struct {
	Namespace  string
	RayService string
	// Image sets the image of the Ray container (KubeRay's container 0) of the head and every
	// worker group; Patch is a JSON merge patch of the RayService. Exactly one is set.
	Image string
	Patch string

	// Port is the probed Service's: when 0, the serve Service's experiment.DefaultServePort, or
	// under an incremental upgrade the Gateway's listener port (GatewayListenerPort).
	Port int
	// GatewayService is the Service in front of the Gateway's data plane, NAMESPACE/NAME or NAME
	// in the RayService's namespace; found by GatewayNameLabel when empty. Incremental only.
	GatewayService string

	// Timeout bounds the probe's whole schedule: the warm-up, the patch and the wait for the
	// switch and the old cluster's deletion.
	Timeout time.Duration

	// The requests, the warm-up and the SLO, as every probed experiment's.
	experiment.ProbeSettings
}

func invalid(format string, args ...any) error { return fault.Errorf(fault.Invalid, format, args...) }

// Validate checks every setting before the API is touched: bad input changes nothing, and it
// changes nothing itself (Defaults fills the unset ones).
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
	if s.Port < 0 || s.Port > 65535 {
		return invalid("%s must be from 1 to 65535, not %d", experiment.SetPort, s.Port)
	}
	if err := validGatewayService(s.GatewayService); err != nil {
		return err
	}
	if err := s.ValidateProbe("the RayService is patched", s.Path, s.post()); err != nil {
		return err
	}
	if s.post() <= 0 {
		return invalid("%s %s leaves no time after the patch (the warm-up, a request timeout and %s for the patch come first): raise it, e.g. %s 10m",
			SetTimeout, s.Timeout, experiment.StepSlack, SetTimeout)
	}
	return nil
}

// Defaults fills what was left unset: the probe's clock and warnings. The port is the probed
// Service's, known once it is resolved.
func (s *Settings) Defaults() {
	s.ProbeSettings.Defaults()
}

// config is the probe's configuration (Validate has checked the settings).
func (s *Settings) config() probe.Config { return s.Config(s.Path) }

// post is how long the probe may run after the patch: --timeout less what comes before it.
func (s *Settings) post() time.Duration {
	return s.Timeout - s.Schedule(0)
}

func (s *Settings) what() string {
	if s.Image != "" {
		return "image " + s.Image
	}
	return "patch"
}

func (s *Settings) probeTarget(t *target) string {
	if t.gateway != nil {
		return gatewayTarget(t.gateway.Service, t.port)
	}
	return fmt.Sprintf("service/%s:%d", t.service, t.port)
}

// reportSettings echo what was asked, for the report and the plan.
func (s *Settings) reportSettings(t *target) ReportSettings {
	return ReportSettings{RayService: s.RayService, Namespace: s.Namespace, Image: s.Image, Patch: string(t.patch),
		Target: s.probeTarget(t), Method: s.config().Method, Path: experiment.ShownPath(s.config().Path), Rate: s.config().Rate,
		WarmupMs: s.Warmup.Milliseconds(), TimeoutMs: s.Timeout.Milliseconds(), RequestTimeout: s.RequestTimeout.Milliseconds()}
}
