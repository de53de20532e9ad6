package kube

import (
	"context"
	"errors"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/rayapi"
)

// DefaultRayTimeout bounds the read of one dashboard: its port-forward and every read.
const DefaultRayTimeout = 10 * time.Second

// ReadRayView reads the dashboard of one head pod through a port-forward, within timeout (0:
// DefaultRayTimeout): what chaos worker-kill --serve-replicas asks of Ray. A dashboard that cannot
// be read is a View saying why (View.Unreachable), never an error.
func (c *Clients) ReadRayView(ctx context.Context, head *corev1.Pod, timeout time.Duration) rayapi.View {
	if timeout <= 0 {
		timeout = DefaultRayTimeout
	}
	v := rayapi.View{Namespace: head.Namespace, Cluster: head.Labels[ray.LabelCluster], Head: head.Name, Port: ray.DashboardPort(head)}
	c.ReadDashboard(ctx, head, &v, timeout, false)
	return v
}

// ReadDashboard reads the dashboard of head (v names it and its port) through its own
// port-forward, closed when done, within timeout, into v; keep keeps the answers as they came
// (rayapi.View.Answers). A head whose Ray asks for a token is sent the token its pod gets
// (rayToken). A dashboard that cannot be read sets v.Unreachable, saying why.
func (c *Clients) ReadDashboard(ctx context.Context, head *corev1.Pod, v *rayapi.View, timeout time.Duration, keep bool) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	token, u := c.rayToken(ctx, head, v)
	if u != nil {
		v.Unreachable = u
		return
	}
	defer v.Forget(token)
	t, err := c.OpenTunnel(ctx, v.Namespace, v.Head, v.Port)
	if err != nil {
		v.Unreachable = tunnelUnreachable(ctx, err, timeout)
		return
	}
	defer t.Close()
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	if keep {
		rayapi.ReadKeeping(ctx, client, "http://"+t.Addr(), token, v)
	} else {
		rayapi.Read(ctx, client, "http://"+t.Addr(), token, v)
	}
	u = v.Unreachable
	switch {
	case u == nil:
	case u.Reason == rayapi.Refused && token == "":
		u.Detail += "; doctor sent no token: the head's Ray container does not say it asks for one (" + ray.EnvAuthMode + ")"
	case u.Reason == rayapi.Refused:
		u.Detail += "; doctor sent the token from " + v.TokenFrom
	case u.Reason == rayapi.Timeout:
		u.Detail += " within " + timeout.String()
	case u.Reason == rayapi.Unconnected:
		// The pod's side says why better than the local EOF: kwok's "no forward found", a
		// kubelet's "connection refused" from inside the pod.
		if le, ok := t.(interface{ LastError() string }); ok && le.LastError() != "" {
			u.Detail = "nothing answers on that port inside the pod: " + le.LastError()
		}
	}
}

// tunnelUnreachable says why the port-forward to the head did not open.
func tunnelUnreachable(ctx context.Context, err error, timeout time.Duration) *rayapi.Unreachable {
	switch {
	case fault.KindOf(err) == fault.Forbidden:
		return &rayapi.Unreachable{Reason: rayapi.Forbidden, Detail: err.Error()}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &rayapi.Unreachable{Reason: rayapi.Timeout, Detail: "the port-forward did not open within " + timeout.String()}
	}
	return &rayapi.Unreachable{Reason: rayapi.Unconnected, Detail: err.Error()}
}
