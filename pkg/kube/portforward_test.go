package kube

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// An API server that refuses pods/portforward answers both the WebSocket and the SPDY upgrade
// with 403 and a Status. Since client-go v0.37 the WebSocket refusal is k8s.io/streaming's
// UpgradeFailureError and the SPDY one text only: PortForward must still try SPDY after the
// WebSocket refusal, as kubectl does, and report the refusal as forbidden, naming the RBAC rule.
func TestPortForwardRefusedIsForbidden(t *testing.T) {
	status := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Message: `pods "head" is forbidden: User "ray-reader" cannot create resource "pods/portforward" in API group "" in the namespace "ns1"`,
		Reason:  metav1.StatusReasonForbidden, Code: http.StatusForbidden}
	body, err := json.Marshal(status)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var upgrades []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/namespaces/ns1/pods/head/portforward" {
			t.Errorf("request %s", r.URL)
		}
		mu.Lock()
		upgrades = append(upgrades, strings.ToLower(r.Header.Get("Upgrade")))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL}
	c := &Clients{Config: cfg, Kube: kubernetes.NewForConfigOrDie(cfg)}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, err := c.PortForward(ctx, "ns1", "head", 8265)
	if err == nil {
		f.Close()
		t.Fatal("the forward opened")
	}
	if fault.KindOf(err) != fault.Forbidden || !strings.Contains(err.Error(), `ask for RBAC verb "create" on "pods/portforward"`) {
		t.Errorf("error %q (kind %v), want forbidden naming create pods/portforward", err, fault.KindOf(err))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(upgrades) != 2 || upgrades[0] != "websocket" || !strings.HasPrefix(upgrades[1], "spdy") {
		t.Errorf("upgrades tried %q, want websocket then SPDY", upgrades)
	}
}
