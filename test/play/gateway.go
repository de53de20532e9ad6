package play

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// GatewayDataPlane plays what a Gateway API implementation (Envoy Gateway, Istio, ...) deploys
// for a Gateway: a pod and a Service labelled gateway.networking.k8s.io/gateway-name (GEP-1762),
// and a proxy that sends each request to a backend of the HTTPRoutes attached to the Gateway, in
// proportion to their weights (PlayGatewayWeights). The proxy runs on loopback; kwok's
// PortForward sends the pod's port 8080 to it, as for the Ray stand-ins. A backend Service is
// reached through the sandbox's pod network (its HTTP proxy): never a pod IP.
type GatewayDataPlane struct {
	Namespace, Gateway, Service string

	dyn   dynamic.Interface
	srv   *http.Server
	http  *http.Client
	mu    sync.Mutex
	read  time.Time
	pick  *weighted
	count map[string]int
}

// GatewayDataPlanePort is the data plane pod's port; its Service's port 80 (the listener KubeRay
// gives a RayService's Gateway) goes to it.
const GatewayDataPlanePort = 8080

var httpRoutesGVR = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}

// StartGatewayDataPlane creates gateway's data plane in ns (the pod on node), serves it, and
// returns once its Service has a ready endpoint; podNetwork is the sandbox's pod network
// (Sandbox.ServiceProxy). Close stops the proxy; the objects go with the namespace.
func StartGatewayDataPlane(ctx context.Context, kube kubernetes.Interface, admin *rest.Config, ns, gateway, node, podNetwork string) (*GatewayDataPlane, error) {
	proxyURL, err := url.Parse(podNetwork)
	if podNetwork == "" || err != nil {
		return nil, fmt.Errorf("the gateway's data plane needs the sandbox's pod network (ServeNetwork): %q %v", podNetwork, err)
	}
	ap, err := sandbox.NewApplier(admin)
	if err != nil {
		return nil, err
	}
	g := &GatewayDataPlane{Namespace: ns, Gateway: gateway, Service: gateway + "-dataplane", dyn: dynamic.NewForConfigOrDie(admin),
		http:  &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}},
		count: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	g.srv = &http.Server{Handler: http.HandlerFunc(g.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = g.srv.Serve(ln) }()
	labels := map[string]string{"gateway.networking.k8s.io/gateway-name": gateway}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: g.Service, Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "proxy", Image: "played/gateway-data-plane",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: GatewayDataPlanePort}}}}}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: g.Service, Labels: labels},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(GatewayDataPlanePort)}}}}
	forward := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "PortForward",
		"metadata": map[string]any{"name": g.Service, "namespace": ns},
		"spec": map[string]any{"forwards": []any{map[string]any{"ports": []any{int64(GatewayDataPlanePort)},
			"target": map[string]any{"address": "127.0.0.1", "port": int64(ln.Addr().(*net.TCPAddr).Port)}}}},
	}}
	if _, err := kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		g.Close()
		return nil, err
	}
	if _, err := kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		g.Close()
		return nil, err
	}
	if _, err := ap.CreateObject(ctx, forward, ns); err != nil {
		g.Close()
		return nil, err
	}
	// Ready when its Service has a ready endpoint, as a gateway controller's rollout would be.
	wait, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		l, err := kube.DiscoveryV1().EndpointSlices(ns).List(wait, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + g.Service})
		if err == nil && readyEndpoint(l.Items) {
			return g, nil
		}
		select {
		case <-wait.Done():
			g.Close()
			return nil, fmt.Errorf("the gateway's data plane %s/%s has no ready endpoint after 60s (%v)", ns, g.Service, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func readyEndpoint(slices []discoveryv1.EndpointSlice) bool {
	for _, s := range slices {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				return true
			}
		}
	}
	return false
}

// Close stops the proxy.
func (g *GatewayDataPlane) Close() { _ = g.srv.Close() }

// Served is how many requests each backend Service answered through the data plane.
func (g *GatewayDataPlane) Served() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]int{}
	for k, v := range g.count {
		out[k] = v
	}
	return out
}

// serve sends the request to the next backend by weight (PlayGatewayWeights): 500 when no backend
// has weight (as the Gateway API asks of an implementation), 502 when the backend cannot be
// reached.
func (g *GatewayDataPlane) serve(rw http.ResponseWriter, req *http.Request) {
	backend, err := g.next(req.Context())
	if err != nil {
		http.Error(rw, "played gateway: "+err.Error(), http.StatusInternalServerError)
		return
	}
	out, err := http.NewRequestWithContext(req.Context(), req.Method, "http://"+backend+req.URL.RequestURI(), req.Body)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = req.Header.Clone()
	resp, err := g.http.Do(out)
	if err != nil {
		http.Error(rw, "played gateway: upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	g.mu.Lock()
	g.count[backend]++
	g.mu.Unlock()
	rw.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(rw, resp.Body)
}

// next is the next backend ("<svc>.<ns>.svc.cluster.local:<port>"), from the Gateway's HTTPRoutes
// as read at most 200 ms ago (an implementation's configuration lags its routes too).
func (g *GatewayDataPlane) next(ctx context.Context) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if time.Since(g.read) > 200*time.Millisecond {
		routes, err := g.dyn.Resource(httpRoutesGVR).Namespace(g.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", err
		}
		g.pick = g.pick.update(g.backends(routes.Items))
		g.read = time.Now()
	}
	if b := g.pick.next(); b != "" {
		return b, nil
	}
	return "", fmt.Errorf("no backend of Gateway %s has weight", g.Gateway)
}

// backends are the weighted backends of the routes attached to the Gateway.
func (g *GatewayDataPlane) backends(routes []unstructured.Unstructured) map[string]int64 {
	out := map[string]int64{}
	for _, r := range routes {
		attached := false
		parents, _, _ := unstructured.NestedSlice(r.Object, "spec", "parentRefs")
		for _, p := range parents {
			if m, ok := p.(map[string]any); ok && m["name"] == g.Gateway {
				attached = true
			}
		}
		rules, _, _ := unstructured.NestedSlice(r.Object, "spec", "rules")
		for _, rule := range rules {
			refs, _, _ := unstructured.NestedSlice(rule.(map[string]any), "backendRefs")
			for _, ref := range refs {
				m := ref.(map[string]any)
				name, _, _ := unstructured.NestedString(m, "name")
				port, _, _ := unstructured.NestedInt64(m, "port")
				weight, found, _ := unstructured.NestedInt64(m, "weight")
				if !found {
					weight = 1 // the Gateway API's default
				}
				if attached && weight > 0 {
					out[fmt.Sprintf("%s.%s.svc.%s:%d", name, g.Namespace, sandbox.ClusterDomain, port)] += weight
				}
			}
		}
	}
	return out
}

// weighted is smooth weighted round-robin: over any run of requests each backend's share is
// its weight's, interleaved.
type weighted struct {
	weights map[string]int64
	current map[string]int64
}

func (w *weighted) update(weights map[string]int64) *weighted {
	n := &weighted{weights: weights, current: map[string]int64{}}
	if w != nil {
		for b := range weights {
			n.current[b] = w.current[b]
		}
	}
	return n
}

func (w *weighted) next() string {
	if w == nil {
		return ""
	}
	var total int64
	best := ""
	for b, wt := range w.weights {
		w.current[b] += wt
		total += wt
		if best == "" || w.current[b] > w.current[best] || w.current[b] == w.current[best] && b < best {
			best = b
		}
	}
	if best != "" {
		w.current[best] -= total
	}
	return best
}
