package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// ClusterDomain is the DNS suffix KubeRay puts after <svc>.<ns>.svc (utils.GetClusterDomainName's
// default) when it dials the Ray dashboard through the head Service.
const ClusterDomain = "cluster.local"

// serviceProxy is the pod network of a ServeNetwork sandbox, given to the operator as HTTP_PROXY.
// It sends http://<svc>.<ns>.svc.cluster.local:<port>/... to a ready endpoint of that Service (as
// DNS and kube-proxy would), and http://<podIP>:<port>/... to that pod; a pod's port reaches
// whatever the pod's kwok PortForward object maps it to (the same mapping `kubectl port-forward`
// uses), which must be a loopback address: no pod IP is ever dialled. A port no PortForward maps
// is refused (502 from the proxy), as a port nothing listens on would be.
//
// The operator's dashboard and Serve proxy clients use http.Client with the default transport
// (KubeRay v1.5.0, v1.6.0: utils.GetRayDashboardClientFunc, GetRayHttpProxyClientFunc), which
// honours HTTP_PROXY; Go never proxies loopback addresses, so its API server connection stays direct.
type serviceProxy struct {
	kube kubernetes.Interface
	dyn  dynamic.Interface
	srv  *http.Server
	URL  string
}

func startServiceProxy(kube kubernetes.Interface, dyn dynamic.Interface) (*serviceProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("service proxy: %v", err)
	}
	p := &serviceProxy{kube: kube, dyn: dyn, URL: "http://" + ln.Addr().String()}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Host = r.In.Header.Get(targetHeader)
			r.Out.Header.Del(targetHeader)
			r.Out.Host = r.In.Host
		},
		// Direct, never through a proxy of its own environment.
		Transport: &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: 2 * time.Second}).DialContext},
		ErrorHandler: func(rw http.ResponseWriter, r *http.Request, err error) {
			http.Error(rw, "sandbox service proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Host == "" || r.Method == http.MethodConnect {
			http.Error(rw, "sandbox service proxy: only plain http:// requests to a Service name or a pod IP", http.StatusBadRequest)
			return
		}
		target, err := p.resolve(r.Context(), r.URL.Host)
		if err != nil {
			// What a client sees in a cluster when DNS has no answer or kube-proxy no endpoint.
			http.Error(rw, "sandbox service proxy: "+err.Error(), http.StatusBadGateway)
			return
		}
		r.Header.Set(targetHeader, target)
		rp.ServeHTTP(rw, r)
	})}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

const targetHeader = "X-Kubectl-Ray-Sandbox-Target"

// resolve maps a Service name or a pod IP, and a port, to the loopback address the pod's kwok
// PortForward sends that port to.
func (p *serviceProxy) resolve(ctx context.Context, hostport string) (string, error) {
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil {
		host, portStr = hostport, "80"
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return "", fmt.Errorf("bad port in %s", hostport)
	}
	var ns, pod string
	if net.ParseIP(host) != nil {
		ns, pod, err = p.podByIP(ctx, host)
	} else {
		ns, pod, port, err = p.endpoint(ctx, host, port)
	}
	if err != nil {
		return "", err
	}
	return p.forwardTarget(ctx, ns, pod, port)
}

// podByIP finds the pod that has ip (one field-selected LIST).
func (p *serviceProxy) podByIP(ctx context.Context, ip string) (ns, name string, err error) {
	l, err := p.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.podIP=" + ip})
	if err != nil {
		return "", "", err
	}
	for _, pod := range l.Items {
		if pod.Status.Phase == corev1.PodRunning {
			return pod.Namespace, pod.Name, nil
		}
	}
	return "", "", fmt.Errorf("no running pod has IP %s", ip)
}

// endpoint resolves <svc>.<ns>.svc.cluster.local:<port> to a ready endpoint pod and its port.
func (p *serviceProxy) endpoint(ctx context.Context, host string, port int) (ns, pod string, target int, err error) {
	parts := strings.SplitN(host, ".", 3)
	if len(parts) != 3 || parts[2] != "svc."+ClusterDomain {
		return "", "", 0, fmt.Errorf("%s is not a Service name (<svc>.<ns>.svc.%s)", host, ClusterDomain)
	}
	svcName, ns := parts[0], parts[1]
	svc, err := p.kube.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		return "", "", 0, err
	}
	portName, found := "", false
	for _, sp := range svc.Spec.Ports {
		if int(sp.Port) == port {
			portName, found = sp.Name, true
		}
	}
	if !found {
		return "", "", 0, fmt.Errorf("service %s/%s has no port %d", ns, svcName, port)
	}
	slices, err := p.kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + svcName})
	if err != nil {
		return "", "", 0, err
	}
	for _, s := range slices.Items {
		for _, sp := range s.Ports {
			if sp.Port != nil && (sp.Name == nil && portName == "" || sp.Name != nil && *sp.Name == portName) {
				target = int(*sp.Port)
			}
		}
		if target == 0 {
			continue
		}
		for _, e := range s.Endpoints {
			if (e.Conditions.Ready == nil || *e.Conditions.Ready) && e.TargetRef != nil && e.TargetRef.Kind == "Pod" {
				return ns, e.TargetRef.Name, target, nil
			}
		}
	}
	return "", "", 0, errors.New("no ready endpoint behind service " + ns + "/" + svcName)
}

var portForwardGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "portforwards"}

// forwardTarget reads the pod's kwok PortForward: where its port goes.
func (p *serviceProxy) forwardTarget(ctx context.Context, ns, pod string, port int) (string, error) {
	pf, err := p.dyn.Resource(portForwardGVR).Namespace(ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("connection refused: pod %s/%s has no PortForward (%v)", ns, pod, err)
	}
	forwards, _, _ := unstructured.NestedSlice(pf.Object, "spec", "forwards")
	for _, f := range forwards {
		fm, _ := f.(map[string]any)
		ports, _, _ := unstructured.NestedSlice(fm, "ports")
		for _, pp := range ports {
			if n, ok := pp.(int64); !ok || int(n) != port {
				continue
			}
			addr, _, _ := unstructured.NestedString(fm, "target", "address")
			tport, _, _ := unstructured.NestedInt64(fm, "target", "port")
			if ip := net.ParseIP(addr); ip == nil || !ip.IsLoopback() {
				return "", fmt.Errorf("PortForward %s/%s sends port %d to %q, not a loopback address", ns, pod, port, addr)
			}
			return net.JoinHostPort(addr, strconv.FormatInt(tport, 10)), nil
		}
	}
	return "", fmt.Errorf("connection refused: pod %s/%s port %d is not forwarded", ns, pod, port)
}

func (p *serviceProxy) close() {
	if p != nil {
		_ = p.srv.Close()
	}
}
