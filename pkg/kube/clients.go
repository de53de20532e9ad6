// Package kube is the one place that talks to the API server: clients, paged lists,
// and the translation of API errors into one-line messages with exit codes.
package kube

import (
	"context"
	"fmt"

	rayclient "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// Clients bundles the typed clients every command uses.
type Clients struct {
	Config *rest.Config
	Kube   kubernetes.Interface
	Ray    rayclient.Interface
	// Tunnels, when set, opens the port-forwards instead of the API server (tests give it a
	// loopback server; client-go's fake clientsets cannot forward).
	Tunnels func(ctx context.Context, namespace, pod string, port int) (Tunnel, error)
}

// NewClients builds clients from kubectl's flags (genericclioptions.ConfigFlags: kubeconfig,
// context, impersonation...).
// A kubeconfig that cannot be loaded is reported as one line naming the flag to fix.
func NewClients(flags *genericclioptions.ConfigFlags) (*Clients, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, explainConfig(flags, err)
	}
	// Lists of thousands of pods must not be throttled by client-go's default 5 QPS.
	cfg.QPS, cfg.Burst = 50, 100
	return ClientsFor(cfg)
}

// ClientsFor builds clients for an existing rest.Config.
func ClientsFor(cfg *rest.Config) (*Clients, error) {
	k, err := kubernetes.NewForConfig(Protobuf(cfg))
	if err != nil {
		return nil, fault.Errorf(fault.API, "cannot build a Kubernetes client: %v", err)
	}
	r, err := rayclient.NewForConfig(cfg)
	if err != nil {
		return nil, fault.Errorf(fault.API, "cannot build a KubeRay client: %v", err)
	}
	return &Clients{Config: cfg, Kube: k, Ray: r}, nil
}

// WithOwnRateLimit is a copy of c whose Kubernetes client has a rate limiter of its own, with
// qps and burst: the watchdog writes its Events and renews its Lease through such copies, so a
// burst of deletes never waits behind Events, and a Lease renewal never waits behind either
// (a renewal late by RenewDeadline would end the leader's term mid-burst). With no rest.Config
// (client fakes) it is c itself.
func (c *Clients) WithOwnRateLimit(qps float32, burst int) (*Clients, error) {
	if c == nil || c.Config == nil {
		return c, nil
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst, cfg.RateLimiter = qps, burst, nil
	k, err := kubernetes.NewForConfig(Protobuf(cfg))
	if err != nil {
		return nil, fault.Errorf(fault.API, "cannot build a Kubernetes client: %v", err)
	}
	return &Clients{Config: cfg, Kube: k, Ray: c.Ray}, nil
}

// Host is the API server address, for messages.
func (c *Clients) Host() string {
	if c == nil || c.Config == nil {
		return ""
	}
	return c.Config.Host
}

// Protobuf returns a copy of cfg that talks protobuf to built-in APIs: decoding thousands of pods
// from protobuf takes a fraction of the time and garbage of JSON. Custom resources (ray.io) have
// no protobuf encoding, so the KubeRay client keeps JSON.
func Protobuf(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.ContentType = runtime.ContentTypeProtobuf
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return c
}

func oneLine(err error) string {
	s := fmt.Sprint(err)
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
