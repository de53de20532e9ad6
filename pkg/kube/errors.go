package kube

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// Request names an API call for error messages: the verb, the resource and where.
type Request struct {
	Verb      string // get, list, watch, delete, create, patch
	Resource  string // pods, rayclusters.ray.io, pods/ephemeralcontainers, ...
	Namespace string // "" for cluster-scoped or all namespaces
	Name      string // for a named object
	Host      string // the API server, for connection errors
}

func (r Request) where() string {
	if r.Namespace == "" {
		return "cluster-wide"
	}
	return fmt.Sprintf("in namespace %q", r.Namespace)
}

// Explain turns an error from the API into one line naming the problem and the fix, with its
// fault.Kind (the command maps it to the exit code CI scripts branch on). Errors that already
// have a Kind pass through.
func Explain(err error, req Request) error {
	if err == nil {
		return nil
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err
	}
	switch {
	case apierrors.IsForbidden(err):
		return fault.Errorf(fault.Forbidden,
			"forbidden: you cannot %s %s %s; ask for RBAC verb %q on %q (check with: kubectl auth can-i %s %s%s)",
			req.Verb, req.Resource, req.where(), req.Verb, req.Resource, req.Verb, req.Resource, nsFlag(req.Namespace))
	case apierrors.IsUnauthorized(err):
		return fault.Errorf(fault.API, "unauthorized: the API server %s rejected your credentials; refresh them or pick another %s", req.Host, SetContext)
	case apierrors.IsNotFound(err) && req.Name != "" && kinds[req.Resource] != "" && req.Namespace != "":
		return fault.Errorf(fault.NotFound, "%s", NotFoundText(req.Name, req.Namespace, "", kinds[req.Resource]))
	case apierrors.IsNotFound(err) && req.Name != "" && clusterScoped[req.Resource]:
		// A node is in no namespace: "cluster-wide" and -A would send the user the wrong way.
		return fault.Errorf(fault.NotFound, "%s %q not found; list them with: kubectl get %s", singular(req.Resource), req.Name, req.Resource)
	case apierrors.IsNotFound(err) && req.Name != "":
		return fault.Errorf(fault.NotFound, "%s %q not found %s; list them with: kubectl get %s%s",
			singular(req.Resource), req.Name, req.where(), req.Resource, nsFlag(req.Namespace))
	case apierrors.IsNotFound(err) && strings.HasSuffix(req.Resource, ".ray.io"):
		return CRDsMissing(req.Resource)
	case isConnectionError(err):
		return fault.Errorf(fault.API, "cannot reach the cluster at %s: %s; check %s and %s", req.Host, rootCause(err), SetKubeconfig, SetContext)
	}
	return fault.Errorf(fault.API, "%s %s %s failed: %s", req.Verb, req.Resource, req.where(), oneLine(err))
}

// The kubectl flags (genericclioptions.ConfigFlags) and the watchdog's settings that messages
// name; the command shows each as its flag.
const (
	SetContext        fault.Field = "context"
	SetKubeconfig     fault.Field = "kubeconfig"
	SetLeaseNamespace fault.Field = "lease-namespace"
)

// CRDsMissing is the error for a cluster without KubeRay's resource definitions.
func CRDsMissing(resource string) error {
	return fault.Errorf(fault.API, "KubeRay is not installed in this cluster: the API has no %s; install the KubeRay CRDs and operator, or pick another %s", resource, SetContext)
}

// clusterScoped are the resources this plugin reads by name that live in no namespace.
var clusterScoped = map[string]bool{"nodes": true}

func nsFlag(ns string) string {
	if ns == "" {
		return " -A"
	}
	return " -n " + ns
}

func singular(resource string) string {
	r := strings.TrimSuffix(resource, ".ray.io")
	r = strings.TrimSuffix(r, "s")
	return r
}

func isConnectionError(err error) bool {
	var ue *url.Error
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.As(err, &oe) ||
		errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused")
}

func rootCause(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return oneLine(err)
		}
		err = u
	}
}
