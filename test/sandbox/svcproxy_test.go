package sandbox

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

func portForward(ns, pod, address string, podPort, local int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "PortForward",
		"metadata": map[string]any{"name": pod, "namespace": ns},
		"spec": map[string]any{"forwards": []any{map[string]any{
			"ports":  []any{podPort},
			"target": map[string]any{"address": address, "port": local},
		}}},
	}}
}

func testProxy(t *testing.T) *serviceProxy {
	t.Helper()
	ready, notReady := true, false
	dash, serve := "dashboard", "serve"
	port8265, port8000 := int32(8265), int32(8000)
	kube := fake.NewSimpleClientset(
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "rc-head-svc", Namespace: "ns"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "dashboard", Port: 8265}, {Name: "serve", Port: 8000}}}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "rc-head-svc-x", Namespace: "ns", Labels: map[string]string{"kubernetes.io/service-name": "rc-head-svc"}},
			Ports: []discoveryv1.EndpointPort{{Name: &dash, Port: &port8265}, {Name: &serve, Port: &port8000}},
			Endpoints: []discoveryv1.Endpoint{
				{Addresses: []string{"10.0.0.9"}, Conditions: discoveryv1.EndpointConditions{Ready: &notReady}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "old-head"}},
				{Addresses: []string{"10.0.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "head"}},
			}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "head", Namespace: "ns"}, Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.2"}},
	)
	scheme := runtime.NewScheme()
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(scheme,
		map[schema.GroupVersionResource]string{portForwardGVR: "PortForwardList"},
		portForward("ns", "head", "127.0.0.1", 8265, 40001), portForward("ns", "evil", "10.1.2.3", 8000, 80))
	p, err := startServiceProxy(kube, dyn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)
	return p
}

func TestServiceProxyResolve(t *testing.T) {
	p := testProxy(t)
	ctx := context.Background()
	got, err := p.resolve(ctx, "rc-head-svc.ns.svc.cluster.local:8265")
	if err != nil || got != "127.0.0.1:40001" {
		t.Errorf("Service name: got %q, %v; want the ready endpoint's PortForward target 127.0.0.1:40001", got, err)
	}
	// The pod field selector is not honoured by the fake clientset, which lists every pod; one pod here.
	if got, err := p.resolve(ctx, "10.0.0.2:8265"); err != nil || got != "127.0.0.1:40001" {
		t.Errorf("pod IP: got %q, %v", got, err)
	}
	for _, c := range []struct{ host, want string }{
		{"rc-head-svc.ns.svc.cluster.local:8000", "port 8000 is not forwarded"},
		{"rc-head-svc.ns.svc.cluster.local:9999", "has no port 9999"},
		{"example.com:80", "not a Service name"},
		{"nope.ns.svc.cluster.local:80", "not found"},
	} {
		if _, err := p.resolve(ctx, c.host); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.host, err, c.want)
		}
	}
	if _, err := p.forwardTarget(ctx, "ns", "evil", 8000); err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Errorf("a PortForward to a non-loopback address must be refused, got %v", err)
	}
}

// TestServiceProxyForwards: a client with the proxy (as the operator's HTTP_PROXY) reaches the
// server a pod's PortForward names, by Service name and by pod IP; a loopback URL goes direct.
func TestServiceProxyForwards(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(rw, "dashboard %s %s", r.Host, r.URL.Path)
	}))
	defer backend.Close()
	port, _ := strconv.Atoi(backend.URL[strings.LastIndex(backend.URL, ":")+1:])
	p := testProxy(t)
	// Point the head's PortForward at the backend.
	obj := portForward("ns", "head", "127.0.0.1", 8265, int64(port))
	if _, err := p.dyn.Resource(portForwardGVR).Namespace("ns").Update(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	proxyURL, _ := url.Parse(p.URL)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	for _, u := range []string{"http://rc-head-svc.ns.svc.cluster.local:8265/api/serve/applications/", "http://10.0.0.2:8265/api/serve/applications/"} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(string(b), "dashboard ") || !strings.HasSuffix(string(b), " /api/serve/applications/") {
			t.Errorf("%s: %d %q", u, resp.StatusCode, b)
		}
	}
	resp, err := client.Get("http://rc-head-svc.ns.svc.cluster.local:8000/-/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("an unforwarded port: %d, want 502 (refused)", resp.StatusCode)
	}
}
