package kube

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/rayapi"
)

// RayQuery asks LoadSnapshot for Ray's own view of RayClusters: each head's dashboard, read
// through a port-forward via the API server (the path chaos head-kill's probe takes), GETs only.
type RayQuery struct {
	// Target, when set, reads only the clusters doctor checks for it (diagnose.Checked); nil
	// reads every RayCluster loaded.
	Target *diagnose.Target
	// Timeout bounds one cluster: its port-forward and every read.
	Timeout time.Duration
	// Deadline bounds all of them: a cluster not read by then is unreachable (rayapi.Deadline).
	Deadline time.Duration
	// Parallel is how many dashboards are read at once.
	Parallel int
	// Keep keeps each dashboard's answers in its View (rayapi.View.Answers), as they came:
	// a bundle saves them.
	Keep bool
}

// The defaults of a RayQuery's bounds (doctor's flags for them). 64 at once keeps a sweep of a
// hundred clusters bounded by about its slowest dashboards (docs/performance.md), within
// client-go's burst of 100 requests; a port-forward is a long-running request, which the API
// server's in-flight limit does not count.
const (
	DefaultRayTimeout  = 10 * time.Second
	DefaultRayDeadline = 60 * time.Second
	DefaultRayParallel = 64
)

// tunnelOpener opens a port-forward (Clients.OpenTunnel; a loopback server in tests).
type tunnelOpener func(ctx context.Context, namespace, pod string, port int) (Tunnel, error)

// readRayViews reads the dashboards of the clusters q picks in s, at most q.Parallel at once,
// each within q.Timeout and all within q.Deadline: the slowest dashboard bounds the run, not
// the sum of them. A dashboard that cannot be read is a View saying why, never an error.
func readRayViews(ctx context.Context, s *diagnose.Snapshot, q RayQuery, open tunnelOpener) []rayapi.View {
	if q.Timeout <= 0 {
		q.Timeout = DefaultRayTimeout
	}
	if q.Deadline <= 0 {
		q.Deadline = DefaultRayDeadline
	}
	if q.Parallel <= 0 {
		q.Parallel = DefaultRayParallel
	}
	ctx, cancel := context.WithTimeout(ctx, q.Deadline)
	defer cancel()
	heads := dashboardHeads(s)
	checked := diagnose.Checked(s, q.Target)
	var views []rayapi.View
	for i := range s.Clusters {
		rc := &s.Clusters[i]
		if checked(rc) {
			views = append(views, rayapi.View{Namespace: rc.Namespace, Cluster: rc.Name})
		}
	}
	sem := make(chan struct{}, q.Parallel)
	var wg sync.WaitGroup
	for i := range views {
		v := &views[i]
		head := heads[v.Namespace+"/"+v.Cluster]
		if head == nil {
			v.Unreachable = &rayapi.Unreachable{Reason: rayapi.NoHead, Detail: "no head pod is Running to reach the dashboard through"}
			continue
		}
		v.Head, v.Port = head.Name, dashboardPort(head)
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				v.Unreachable = &rayapi.Unreachable{Reason: rayapi.Deadline, Detail: "not read: the Ray reads' deadline of " + q.Deadline.String() + " passed first"}
				return
			}
			readRayView(ctx, v, q.Timeout, q.Keep, open)
		}()
	}
	wg.Wait()
	return views
}

// ReadRayView reads the dashboard of one head pod through a port-forward, within timeout (0:
// DefaultRayTimeout): what chaos worker-kill --serve-replicas asks of Ray. A dashboard that cannot
// be read is a View saying why (View.Unreachable), never an error.
func (c *Clients) ReadRayView(ctx context.Context, head *corev1.Pod, timeout time.Duration) rayapi.View {
	if timeout <= 0 {
		timeout = DefaultRayTimeout
	}
	v := rayapi.View{Namespace: head.Namespace, Cluster: head.Labels[ray.LabelCluster], Head: head.Name, Port: dashboardPort(head)}
	readRayView(ctx, &v, timeout, false, c.OpenTunnel)
	return v
}

// readRayView reads one dashboard through its own port-forward, closed when done.
func readRayView(ctx context.Context, v *rayapi.View, timeout time.Duration, keep bool, open tunnelOpener) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t, err := open(ctx, v.Namespace, v.Head, v.Port)
	if err != nil {
		v.Unreachable = tunnelUnreachable(ctx, err, timeout)
		return
	}
	defer t.Close()
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	if keep {
		rayapi.ReadKeeping(ctx, client, "http://"+t.Addr(), v)
	} else {
		rayapi.Read(ctx, client, "http://"+t.Addr(), v)
	}
	u := v.Unreachable
	switch {
	case u == nil:
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

// dashboardHeads is, per namespace/cluster, the head pod to reach the dashboard through: Running
// and not being deleted, the newest when there are two (a replacement coming up).
func dashboardHeads(s *diagnose.Snapshot) map[string]*corev1.Pod {
	var heads []*corev1.Pod
	for i := range s.Pods {
		p := &s.Pods[i]
		if ray.IsHead(p) && ray.Running(p) {
			heads = append(heads, p)
		}
	}
	sort.SliceStable(heads, func(a, b int) bool { return heads[a].CreationTimestamp.Before(&heads[b].CreationTimestamp) })
	out := map[string]*corev1.Pod{}
	for _, p := range heads {
		out[p.Namespace+"/"+p.Labels[ray.LabelCluster]] = p
	}
	return out
}

// dashboardPort is the head's container port named "dashboard" (KubeRay's name), else Ray's
// default 8265.
func dashboardPort(head *corev1.Pod) int {
	for _, c := range head.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == "dashboard" {
				return int(p.ContainerPort)
			}
		}
	}
	return diagnose.DefaultDashboardPort
}
