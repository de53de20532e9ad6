package e2e

import (
	"bytes"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// apiProxy is a reverse proxy on loopback in front of a sandbox's API server. It records every
// pod DELETE (path, DeleteOptions, the API server's answer) and can hold the next ones until the
// test releases them: how a test gets between heal's plan and its delete without any hook in
// the product. Its kubeconfig carries the admin token, so heal runs as admin through it, and
// trusts the proxy's own certificate.
type apiProxy struct {
	t          *testing.T
	srv        *httptest.Server
	kubeconfig string

	mu      sync.Mutex
	deletes []proxiedDelete
	hold    int // how many of the next pod DELETEs to hold
	held    chan heldDelete
	// loseCordons: every cordon (a node PATCH setting unschedulable, not a dry run) reaches the
	// API server, and the client's connection is cut before the reply; lostCordons counts them.
	loseCordons bool
	lostCordons int
}

// proxiedDelete is one pod DELETE that went through the proxy.
type proxiedDelete struct {
	Path    string
	Options metav1.DeleteOptions
	Status  int // the API server's answer
	// DecodeErr: the body was not DeleteOptions.
	DecodeErr string
}

// heldDelete is a DELETE waiting for the test: close Release to send it on.
type heldDelete struct {
	Path    string
	Release chan struct{}
}

func newAPIProxy(t *testing.T, sb *sandbox.Sandbox) *apiProxy {
	t.Helper()
	target, err := url.Parse(sb.Admin.Host)
	if err != nil {
		t.Fatal(err)
	}
	// The client's own Authorization header passes through; the transport adds only TLS.
	cfg := rest.CopyConfig(sb.Admin)
	cfg.BearerToken, cfg.BearerTokenFile = "", ""
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = rt
	rp.FlushInterval = -1 // watches stream
	p := &apiProxy{t: t, held: make(chan heldDelete, 16)}
	// TLS, as client-go sends no bearer token over plain http.
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.loseCordon(w, r, rp) {
			return
		}
		if r.Method != http.MethodDelete || !strings.Contains(r.URL.Path, "/pods/") {
			rp.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		d := proxiedDelete{Path: r.URL.Path}
		// client-go sends DeleteOptions as protobuf; the universal deserializer reads either.
		if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, &d.Options); err != nil {
			d.DecodeErr = err.Error()
		}
		p.mu.Lock()
		hold := p.hold > 0
		if hold {
			p.hold--
		}
		p.mu.Unlock()
		if hold {
			h := heldDelete{Path: r.URL.Path, Release: make(chan struct{})}
			p.held <- h
			select {
			case <-h.Release:
			case <-r.Context().Done():
				return
			}
		}
		rec := &statusRecorder{ResponseWriter: w, record: func(status int) {
			d.Status = status
			p.mu.Lock()
			p.deletes = append(p.deletes, d)
			p.mu.Unlock()
		}}
		rp.ServeHTTP(rec, r)
		rec.recordOnce(http.StatusOK) // when nothing was written (the client went away)
	}))
	t.Cleanup(p.srv.Close)

	kc := clientcmdapi.NewConfig()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	kc.Clusters["proxy"] = &clientcmdapi.Cluster{Server: p.srv.URL, CertificateAuthorityData: ca}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: sb.Admin.BearerToken}
	kc.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "admin", Namespace: "default"}
	kc.CurrentContext = "proxy"
	p.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig-proxy")
	if err := clientcmd.WriteToFile(*kc, p.kubeconfig); err != nil {
		t.Fatal(err)
	}
	return p
}

// loseCordon plays a reply lost on the way back (a timeout, a dropped connection) for a cordon:
// the PATCH is sent on and lands, the connection is closed before the client reads a byte.
func (p *apiProxy) loseCordon(w http.ResponseWriter, r *http.Request, rp *httputil.ReverseProxy) bool {
	p.mu.Lock()
	lose := p.loseCordons
	p.mu.Unlock()
	if !lose || r.Method != http.MethodPatch || !strings.Contains(r.URL.Path, "/nodes/") || r.URL.Query().Get("dryRun") != "" {
		return false
	}
	body, _ := io.ReadAll(r.Body)
	if !bytes.Contains(body, []byte(`"unschedulable":true`)) {
		r.Body = io.NopCloser(bytes.NewReader(body))
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rp.ServeHTTP(httptest.NewRecorder(), r)
	p.mu.Lock()
	p.lostCordons++
	p.mu.Unlock()
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
		}
	}
	return true
}

// Hold makes the proxy hold the next n pod DELETEs until released.
func (p *apiProxy) Hold(n int) {
	p.mu.Lock()
	p.hold += n
	p.mu.Unlock()
}

// Held waits for a held DELETE; a command that ends first (done) fails the test with its output.
func (p *apiProxy) Held(timeout time.Duration, done <-chan Result) heldDelete {
	p.t.Helper()
	select {
	case h := <-p.held:
		return h
	case res := <-done:
		p.t.Fatalf("the command ended before its DELETE reached the proxy: %s", res)
	case <-time.After(timeout):
		p.t.Fatalf("no pod DELETE reached the proxy within %s", timeout)
	}
	return heldDelete{}
}

// Deletes are the pod DELETEs that went through, with the API server's answers.
func (p *apiProxy) Deletes() []proxiedDelete {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxiedDelete(nil), p.deletes...)
}

// statusRecorder records a DELETE's status before the response reaches the client: recording
// after the proxy returned raced a command that read its answer and exited at once, and a test
// that read Deletes() then found none.
type statusRecorder struct {
	http.ResponseWriter
	record   func(status int)
	recorded bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if code >= http.StatusOK {
		s.recordOnce(code)
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.recordOnce(http.StatusOK)
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) recordOnce(code int) {
	if !s.recorded {
		s.recorded = true
		s.record(code)
	}
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
