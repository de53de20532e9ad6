package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	streamhttp "k8s.io/streaming/pkg/httpstream"
)

// Forward is one open port-forward to a pod's port through the API server (the same path as
// `kubectl port-forward`): a local listener on 127.0.0.1 whose connections become streams to the
// pod. Pod IPs are never dialed.
type Forward struct {
	Pod   string
	Local int // the local port on 127.0.0.1

	stop chan struct{}
	done chan struct{}
	once sync.Once
	err  error
	key  string // namespace/pod:port, for LastError
}

// Addr is host:port of the local end.
func (f *Forward) Addr() string { return "127.0.0.1:" + strconv.Itoa(f.Local) }

// Done is closed when the forward ended: closed by Close, or its connection to the pod was lost.
func (f *Forward) Done() <-chan struct{} { return f.done }

// Err is why the forward ended, after Done; nil after Close.
func (f *Forward) Err() error {
	<-f.done
	return f.err
}

// Close stops the listener and the connection; safe to call more than once.
func (f *Forward) Close() {
	f.once.Do(func() { close(f.stop) })
	<-f.done
}

// firstError remembers the dialer's typed error: the port-forwarder formats it with %s, which
// would lose the API status (403 vs. anything else) that the user's message depends on.
type firstError struct {
	httpstream.Dialer
	mu  sync.Mutex
	err error
	// wsStatus is the API server's Status in the WebSocket attempt's refusal. Since client-go
	// v0.37 the SPDY fallback's refusal is text only ("unable to upgrade connection: pods ... is
	// forbidden"), so a refusal of both is explained from this one.
	wsStatus *apierrors.StatusError
}

// typed is the error to explain: the last attempt's, or the WebSocket attempt's Status when the
// last one carries none.
func (d *firstError) typed() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var se apierrors.APIStatus
	if d.err != nil && !errors.As(d.err, &se) && d.wsStatus != nil {
		return d.wsStatus
	}
	return d.err
}

func (d *firstError) Dial(protocols ...string) (httpstream.Connection, string, error) {
	c, p, err := d.Dialer.Dial(protocols...)
	if err != nil {
		d.mu.Lock()
		d.err = err
		d.mu.Unlock()
	}
	return c, p, err
}

// PortForward opens a forward to port of pod namespace/name and returns once it listens. It uses
// WebSockets (API servers >= 1.30) and falls back to SPDY, as kubectl does. A refusal names the
// RBAC verb and resource (create pods/portforward).
func (c *Clients) PortForward(ctx context.Context, namespace, pod string, port int) (*Forward, error) {
	req := Request{Verb: "create", Resource: "pods/portforward", Namespace: namespace, Name: pod, Host: c.Host()}
	u := c.Kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward").URL()
	rt, upgrader, err := spdy.RoundTripperFor(c.Config)
	if err != nil {
		return nil, fmt.Errorf("cannot build a port-forward transport: %w", err)
	}
	spdyDialer := spdy.NewDialer(upgrader, &http.Client{Transport: rt}, http.MethodPost, u)
	wsDialer, err := portforward.NewSPDYOverWebsocketDialer(u, c.Config)
	if err != nil {
		return nil, fmt.Errorf("cannot build a port-forward transport: %w", err)
	}
	// Since client-go v0.37 the WebSocket dialer's refusals are k8s.io/streaming's
	// UpgradeFailureError, which apimachinery's httpstream.IsUpgradeFailure does not know: asking
	// it, an API server without WebSocket port-forward (before 1.30) would never be tried with
	// SPDY. kubectl's port-forward asks streaming's, as here; the refusal's Status is kept.
	dialer := &firstError{}
	dialer.Dialer = portforward.NewFallbackDialer(wsDialer, spdyDialer, func(err error) bool {
		var uf *streamhttp.UpgradeFailureError
		var se *apierrors.StatusError
		if errors.As(err, &uf) && errors.As(uf.Cause, &se) {
			dialer.mu.Lock()
			dialer.wsStatus = se
			dialer.mu.Unlock()
		}
		return streamhttp.IsUpgradeFailure(err) || streamhttp.IsHTTPSProxyError(err)
	})
	keepForwardErrors()
	f := &Forward{Pod: pod, stop: make(chan struct{}), done: make(chan struct{}), key: namespace + "/" + pod + ":" + strconv.Itoa(port)}
	ready := make(chan struct{})
	pf, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(port)}, f.stop, ready, io.Discard, io.Discard)
	if err != nil {
		return nil, fmt.Errorf("cannot set up a port-forward to pod %s: %w", pod, err)
	}
	go func() {
		defer close(f.done)
		if err := pf.ForwardPorts(); err != nil {
			f.err = err
		}
	}()
	select {
	case <-ready:
	case <-f.done:
		if derr := dialer.typed(); derr != nil {
			return nil, explainForward(derr, req)
		}
		return nil, explainForward(f.err, req)
	case <-ctx.Done():
		f.Close()
		return nil, ctx.Err()
	}
	ports, err := pf.GetPorts()
	if err != nil || len(ports) == 0 {
		f.Close()
		return nil, fmt.Errorf("port-forward to pod %s listens on no port: %v", pod, err)
	}
	f.Local = int(ports[0].Local)
	return f, nil
}

func explainForward(err error, req Request) error {
	if err == nil {
		err = errors.New("the connection ended before it was ready")
	}
	e := Explain(err, req)
	return e
}
