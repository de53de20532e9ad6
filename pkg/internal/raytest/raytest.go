// Package raytest is Ray for unit tests: a head's dashboard played by a loopback HTTP server that
// kube.Clients.Tunnels "port-forwards" to, answering as Ray's dashboard does, and Ray pods as
// KubeRay labels them.
package raytest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// Quiet is a dashboard with nothing to say: the GCS is alive, no version, no nodes, no Serve
// applications, no jobs. Pods without an IP (the unit tests' scenes) are matched with no node,
// so every rule about Ray's view stays silent.
var Quiet = map[string]string{
	"/api/gcs_healthz":         "success",
	"/api/version":             `{}`,
	"/api/v0/nodes":            `{"result":true,"msg":"","data":{"result":{"total":0,"num_after_truncation":0,"result":[]}}}`,
	"/api/serve/applications/": `{"applications":{}}`,
	"/api/jobs/":               `[]`,
	"/api/cluster_status":      `{"result":true,"msg":"Got cluster status.","data":{"autoscalingStatus":null,"autoscalingError":null,"clusterStatus":null}}`,
}

// publicPaths are what Ray's dashboard answers without a token (http_server_head.py).
var publicPaths = map[string]bool{"/": true, "/favicon.ico": true, "/api/authentication_mode": true, "/api/authenticate": true,
	"/api/healthz": true, "/api/gcs_healthz": true, "/api/local_raylet_healthz": true, "/-/healthz": true}

// Dashboard serves bodies by path (404 elsewhere) and returns the Tunnels of kube.Clients that
// reach it, recording every pod forwarded to.
func Dashboard(t *testing.T, bodies map[string]string) (open func(ctx context.Context, namespace, pod string, port int) (kube.Tunnel, error), forwarded func() []string) {
	t.Helper()
	return TokenDashboard(t, bodies, "")
}

// TokenDashboard is Dashboard with Ray's token authentication on when token is not "": the
// health checks answer without a token, as Ray's do; any other path answers 401 without one and
// 403 with another, in Ray's words (ray/_private/authentication/http_token_authentication.py).
// Ray reads the Authorization header first, then x-ray-authorization (which KubeRay sends).
func TokenDashboard(t *testing.T, bodies map[string]string, token string) (open func(ctx context.Context, namespace, pod string, port int) (kube.Tunnel, error), forwarded func() []string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("%s %s: doctor only reads Ray", r.Method, r.URL)
		}
		if token != "" && !publicPaths[r.URL.Path] {
			got := r.Header.Get("Authorization")
			if got == "" {
				got = r.Header.Get("x-ray-authorization")
			}
			switch {
			case got == "":
				http.Error(w, "Unauthorized: Missing authentication token", http.StatusUnauthorized)
				return
			case got != "Bearer "+token:
				http.Error(w, "Forbidden: Invalid authentication token", http.StatusForbidden)
				return
			}
		}
		b, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(b))
	}))
	t.Cleanup(srv.Close)
	var mu sync.Mutex
	var pods []string
	open = func(_ context.Context, namespace, pod string, _ int) (kube.Tunnel, error) {
		mu.Lock()
		pods = append(pods, namespace+"/"+pod)
		mu.Unlock()
		return &tunnel{addr: strings.TrimPrefix(srv.URL, "http://"), done: make(chan struct{})}, nil
	}
	forwarded = func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), pods...)
	}
	return open, forwarded
}

type tunnel struct {
	addr string
	done chan struct{}
	once sync.Once
}

func (t *tunnel) Addr() string          { return t.addr }
func (t *tunnel) Done() <-chan struct{} { return t.done }
func (t *tunnel) Close()                { t.once.Do(func() { close(t.done) }) }
