package upgrade

import (
	"context"
	"fmt"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Under NewClusterWithIncrementalUpgrade (on by default from KubeRay v1.7.0) clients reach a
// RayService through its Gateway <rs>-gateway, whose HTTPRoute <rs>-httproute weights the
// clusters' own serve Services (<cluster>-serve-svc); there is no <rs>-serve-svc. The operator
// moves capacity, then traffic, step by step, and only while the Gateway and the HTTPRoute are
// ready (rayservice_controller.go, checkIfNeedTargetCapacityUpdate): the probe goes through the
// Gateway's data plane, the one thing that sees the split as clients do.

// GatewayNameLabel is the label GEP-1762 asks an implementation to put on what it deploys for a
// Gateway (its data plane's Service among them): the Gateway's name.
const GatewayNameLabel = "gateway.networking.k8s.io/gateway-name"

// GatewayListenerPort is the port of the listener KubeRay gives the RayService's Gateway
// (utils.DefaultGatewayListenerPort): the data plane's Service port the probe uses by default.
const GatewayListenerPort = 80

// Gateways reads what an incremental upgrade goes through (pkg/kube's Clients, or a fake).
type Gateways interface {
	GetGateway(ctx context.Context, namespace, name string) (*ray.Gateway, error)
	GetHTTPRoute(ctx context.Context, namespace, name string) (*ray.HTTPRoute, error)
	ListServices(ctx context.Context, namespace, selector string) ([]corev1.Service, error)
}

// gatewayEntry is where clients enter an incrementally upgraded RayService.
type gatewayEntry struct {
	Gateway, HTTPRoute string
	Service            *corev1.Service // the Gateway's data plane
}

// resolveGateway checks that the operator would carry an incremental upgrade through (its Gateway
// and HTTPRoute exist and are ready) and finds the Service in front of the Gateway's data plane:
// --gateway-service, else the one Service of rs's namespace labelled with the Gateway's name.
func resolveGateway(ctx context.Context, c Cluster, s *Settings, rs *rayv1.RayService) (*gatewayEntry, error) {
	ns := rs.Namespace
	e := &gatewayEntry{Gateway: ray.GatewayName(rs), HTTPRoute: ray.HTTPRouteName(rs)}
	gw, err := c.GetGateway(ctx, ns, e.Gateway)
	if fault.KindOf(err) == fault.NotFound {
		return nil, invalid("RayService %s/%s asks for NewClusterWithIncrementalUpgrade and has no Gateway %s: either its operator runs without the %s feature gate (off by default before KubeRay v1.7.0), and then it starts no new cluster for a change, or the cluster has no Gateway API (kubectl ray doctor reports that one: incremental-upgrade-blocked); nothing was changed",
			ns, rs.Name, e.Gateway, ray.FeatureIncrementalUpgr)
	}
	if err != nil {
		return nil, err
	}
	if ok, why := ray.GatewayReady(gw); !ok {
		return nil, invalid("Gateway %s/%s is not ready (%s): KubeRay moves no capacity to the new cluster until it is, so the upgrade would stall at 0%%; have GatewayClass %s's controller accept it (kubectl ray doctor: incremental-upgrade-blocked); nothing was changed",
			ns, e.Gateway, why, gw.Spec.GatewayClassName)
	}
	route, err := c.GetHTTPRoute(ctx, ns, e.HTTPRoute)
	if err != nil {
		return nil, err
	}
	if ok, why := ray.RouteReady(route, e.Gateway, ns); !ok {
		return nil, invalid("HTTPRoute %s/%s is not ready (%s): KubeRay moves no capacity to the new cluster until it is, so the upgrade would stall at 0%%; nothing was changed",
			ns, e.HTTPRoute, why)
	}
	if e.Service, err = dataPlaneService(ctx, c, s, ns, e.Gateway); err != nil {
		return nil, err
	}
	return e, nil
}

func dataPlaneService(ctx context.Context, c Cluster, s *Settings, ns, gateway string) (*corev1.Service, error) {
	if s.GatewayService != "" {
		svcNS, name := splitGatewayService(s.GatewayService, ns)
		return c.GetService(ctx, svcNS, name)
	}
	svcs, err := c.ListServices(ctx, ns, GatewayNameLabel+"="+gateway)
	if err != nil {
		return nil, err
	}
	switch len(svcs) {
	case 1:
		return &svcs[0], nil
	case 0:
		return nil, invalid("no Service of Gateway %s/%s's data plane was found (none in namespace %s is labelled %s=%s, as GEP-1762 implementations label them): name the Service clients reach the Gateway through with %s NAMESPACE/NAME; nothing was changed",
			ns, gateway, ns, GatewayNameLabel, gateway, SetGatewayService)
	}
	var names []string
	for _, sv := range svcs {
		names = append(names, sv.Name)
	}
	return nil, invalid("Gateway %s/%s has %d data plane Services (%s): name the one clients reach it through with %s NAMESPACE/NAME; nothing was changed",
		ns, gateway, len(svcs), strings.Join(names, ", "), SetGatewayService)
}

// splitGatewayService reads --gateway-service: NAMESPACE/NAME, or NAME in namespace ns.
func splitGatewayService(v, ns string) (string, string) {
	if i := strings.IndexByte(v, '/'); i >= 0 {
		return v[:i], v[i+1:]
	}
	return ns, v
}

// servicePort is the TCP port of svc the probe uses: port, or when 0 the default one (def).
func servicePort(svc *corev1.Service, port, def int) (int, string, error) {
	if port == 0 {
		port = def
	}
	for _, p := range svc.Spec.Ports {
		if int(p.Port) == port && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) {
			return port, p.Name, nil
		}
	}
	return 0, "", invalid("Service %s/%s has no TCP port %d: pass %s", svc.Namespace, svc.Name, port, experiment.SetPort)
}

func validGatewayService(v string) error {
	if v == "" {
		return nil
	}
	ns, name := splitGatewayService(v, "ns")
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return invalid("%s %q: give NAMESPACE/NAME or NAME of a Service, e.g. %s istio-system/demo-gateway-istio", SetGatewayService, v, SetGatewayService)
	}
	return nil
}

func gatewayTarget(svc *corev1.Service, port int) string {
	return fmt.Sprintf("service/%s/%s:%d", svc.Namespace, svc.Name, port)
}
