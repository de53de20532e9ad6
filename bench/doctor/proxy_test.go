//go:build bench

package doctor

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/rest"
)

// countingProxy is a reverse proxy on loopback in front of the API server that counts the
// requests going through it: the API request count of a doctor run is what it sent here. It
// authenticates upstream as the sandbox admin, so clients pointed at it need no credentials.
type countingProxy struct {
	URL   string
	n     atomic.Int64
	mu    sync.Mutex
	paths []string
	srv   *http.Server
	// logs, when set, is the log every GET of pods/log is answered with, here, as a kubelet
	// would (kwok's nodes have none): cut to the request's limitBytes.
	logs atomic.Pointer[[]byte]
}

func newCountingProxy(admin *rest.Config) (*countingProxy, error) {
	rt, err := rest.TransportFor(admin)
	if err != nil {
		return nil, err
	}
	target, err := url.Parse(admin.Host)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = rt
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{URL: "http://" + l.Addr().String()}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.n.Add(1)
		p.mu.Lock()
		p.paths = append(p.paths, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		p.mu.Unlock()
		if body := p.logs.Load(); body != nil && strings.HasSuffix(r.URL.Path, "/log") {
			b := *body
			if n, err := strconv.Atoi(r.URL.Query().Get("limitBytes")); err == nil && n < len(b) {
				b = b[:n]
			}
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(b)
			return
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

// reset zeroes the count and returns what it was, with the requests seen.
func (p *countingProxy) reset() (int64, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	paths := p.paths
	p.paths = nil
	return p.n.Swap(0), paths
}

func (p *countingProxy) Close() error { return p.srv.Close() }
