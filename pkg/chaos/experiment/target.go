package experiment

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// What every experiment that probes a URL or a Service resolves the same way (head-kill, drain).

// SetTarget and SetService name the probe's target flags in messages.
const (
	SetTarget  fault.Field = "target"
	SetService fault.Field = "service"
)

// TargetPath is the path to probe: path, or the path of target (a URL). It refuses a target that
// is not an http(s) URL, carries credentials, or gives a path twice; messages show the URL
// redacted, since a target can carry credentials.
func TargetPath(target, path string) (string, error) {
	if target == "" {
		return path, nil
	}
	u, err := url.Parse(target)
	if err != nil {
		return "", invalid("%s is not a URL (%v), e.g. http://serve.example:8000", SetTarget, errors.Unwrap(err))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", invalid("%s %q is not an http or https URL, e.g. http://serve.example:8000", SetTarget, u.Redacted())
	}
	if u.User != nil {
		return "", invalid("%s %q has credentials in it, which the probe would not send and reports would show: pass them as %s 'Authorization: ...'", SetTarget, u.Redacted(), SetHeader)
	}
	rest := u.RequestURI()
	if rest == "/" {
		return path, nil
	}
	if path != "" {
		return "", invalid("%s %q has a path and %s is %q: give the path once", SetTarget, ShownPath(rest), SetPath, ShownPath(path))
	}
	return rest, nil
}

// TargetBase is target's scheme://host[:port] (TargetPath has accepted it).
func TargetBase(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// ServiceGetter reads the probed Service.
type ServiceGetter interface {
	GetService(ctx context.Context, namespace, name string) (*corev1.Service, error)
}

// ServicePort reads Service namespace/name and returns the name of its TCP port port, which the
// endpoints follow; a Service without it is refused, with its ports.
func ServicePort(ctx context.Context, c ServiceGetter, namespace, name string, port int) (portName string, err error) {
	svc, err := c.GetService(ctx, namespace, name)
	if err != nil {
		return "", err
	}
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, fmt.Sprint(p.Port))
		if int(p.Port) == port && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) {
			return p.Name, nil
		}
	}
	return "", invalid("Service %s/%s has no TCP port %d (its ports: %s): pass %s", namespace, name, port, strings.Join(ports, ", "), SetPort)
}
