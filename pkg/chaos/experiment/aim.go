package experiment

import (
	"context"
	"strconv"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Aim is what an experiment that takes pods away probes and for how long (head-kill, drain,
// worker-kill):
// a URL or a Service and port, and After or UntilRecovered within Timeout. Embedded, its fields
// are the experiment's settings.
type Aim struct {
	Target  string
	Service string
	Port    int
	PortSet bool

	After          time.Duration
	AfterSet       bool
	UntilRecovered bool
	// Timeout bounds the probe after the step with UntilRecovered (and, for a drain, the evictions).
	Timeout time.Duration

	// clusterService is the active cluster's own serve Service, tried when the RayService's is
	// missing: under NewClusterWithIncrementalUpgrade (with the operator's gate on) KubeRay makes
	// no <rs>-serve-svc, only one per cluster, which the Gateway's HTTPRoute weights.
	clusterService string
}

// The schedule's settings that messages name.
const (
	SetAfter          fault.Field = "after"
	SetUntilRecovered fault.Field = "until-recovered"
	SetTimeout        fault.Field = "timeout"
)

// Validate checks the schedule and the target. defaulted says a Service is the default (a
// RayService's serve Service); noTarget and its args are the message when nothing says what to
// probe (Settings among args are shown as their flags).
func (a *Aim) Validate(defaulted bool, noTarget string, args ...any) error {
	switch {
	case a.UntilRecovered && a.AfterSet:
		return invalid("%s and %s exclude each other: give one", SetAfter, SetUntilRecovered)
	case a.Timeout <= 0:
		return invalid("%s must be positive, e.g. %s 5m", SetTimeout, SetTimeout)
	case !a.UntilRecovered && a.After <= 0:
		return invalid("%s must be positive, e.g. %s 60s", SetAfter, SetAfter)
	}
	return a.ValidateTarget(defaulted, noTarget, args...)
}

// ValidateTarget checks what is probed, as Validate does: a URL, or a Service and its port.
func (a *Aim) ValidateTarget(defaulted bool, noTarget string, args ...any) error {
	switch {
	case a.Target != "" && (a.Service != "" || a.PortSet):
		return invalid("%s and %s/%s exclude each other: probe a URL or a Service", SetTarget, SetService, SetPort)
	case a.Target == "" && a.Service == "" && !defaulted:
		return invalid(noTarget, args...)
	case a.Service != "" && !a.PortSet:
		return invalid("%s %s needs %s N (the Service port to probe)", SetService, a.Service, SetPort)
	case a.PortSet && (a.Port < 1 || a.Port > 65535):
		return invalid("%s must be from 1 to 65535, not %d", SetPort, a.Port)
	}
	return nil
}

// Post is how long the probe runs after the step: After, or Timeout with UntilRecovered.
func (a *Aim) Post() time.Duration {
	if a.UntilRecovered {
		return a.Timeout
	}
	return a.After
}

// ProbeTarget is what the reports and plans name as probed: service/NAME:PORT, or the URL's base.
func (a *Aim) ProbeTarget(service string) string {
	if service != "" {
		return "service/" + service + ":" + strconv.Itoa(a.Port)
	}
	return TargetBase(a.Target)
}

// ServeOf is the RayCluster RayService namespace/name serves with now, read once; with neither a
// URL nor a Service given, the probe aims at its serve Service, on DefaultServePort unless a port
// was given.
func (a *Aim) ServeOf(ctx context.Context, c RayServices, namespace, name string) (string, error) {
	sv, err := ServingOf(ctx, c, namespace, name)
	if err != nil {
		return "", err
	}
	if a.Service == "" && a.Target == "" {
		a.Service = sv.Service
		if !a.PortSet {
			a.Port = DefaultServePort
		}
		if ray.IncrementalUpgrade(sv.RayService) {
			a.clusterService = ray.ServeServiceName(sv.Cluster)
		}
	}
	return sv.Cluster, nil
}

// ProbedService is the Service the probe aims at and its port's name, read once; none for a URL.
func (a *Aim) ProbedService(ctx context.Context, c ServiceGetter, namespace string) (service, portName string, err error) {
	if a.Target != "" {
		return "", "", nil
	}
	portName, err = ServicePort(ctx, c, namespace, a.Service, a.Port)
	if fault.KindOf(err) == fault.NotFound && a.clusterService != "" {
		a.Service, a.clusterService = a.clusterService, ""
		portName, err = ServicePort(ctx, c, namespace, a.Service, a.Port)
	}
	if err != nil {
		return "", "", err
	}
	return a.Service, portName, nil
}
