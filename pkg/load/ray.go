package load

import (
	"context"
	"sort"
	"sync"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/rayapi"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RayQuery asks FromAPI for Ray's own view of RayClusters: each head's dashboard, read through a
// port-forward via the API server (the path chaos head-kill's probe takes), GETs only.
type RayQuery struct {
	// Target, when set, reads only the clusters doctor checks for it (Query.Reads.Checked); nil
	// reads every RayCluster loaded.
	Target *ray.Target
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
	DefaultRayTimeout  = kube.DefaultRayTimeout
	DefaultRayDeadline = 60 * time.Second
	DefaultRayParallel = 64
)

// rayViews reads the dashboards of the clusters q picks in s, at most q.Parallel at once, each
// within q.Timeout and all within q.Deadline: the slowest dashboard bounds the run, not the sum
// of them. A dashboard that cannot be read is a View saying why, never an error.
func rayViews(ctx context.Context, c *kube.Clients, s *state.Snapshot, q RayQuery, checkedFor func(*state.Snapshot, *ray.Target) func(*rayv1.RayCluster) bool) []rayapi.View {
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
	checked := func(*rayv1.RayCluster) bool { return true }
	if q.Target != nil && checkedFor != nil {
		checked = checkedFor(s, q.Target)
	}
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
		v.Head, v.Port = head.Name, ray.DashboardPort(head)
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
			c.ReadDashboard(ctx, head, v, q.Timeout, q.Keep)
		}()
	}
	wg.Wait()
	return views
}

// dashboardHeads is, per namespace/cluster, the head pod to reach the dashboard through: Running
// and not being deleted, the newest when there are two (a replacement coming up).
func dashboardHeads(s *state.Snapshot) map[string]*corev1.Pod {
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
