package load

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/rayapi"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

func rayScene(clusters ...string) *state.Snapshot {
	s := &state.Snapshot{}
	for _, c := range clusters {
		s.Clusters = append(s.Clusters, rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: c}})
		if strings.HasPrefix(c, "headless") {
			continue
		}
		s.Pods = append(s.Pods, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: c + "-head", Labels: map[string]string{"ray.io/cluster": c, "ray.io/node-type": "head"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head", Ports: []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 8266}}}}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning},
		})
	}
	return s
}

func TestReadRayViewsSaysWhyEachWasNotRead(t *testing.T) {
	s := rayScene("forbidden", "headless", "slow")
	var ports []int
	open := func(ctx context.Context, ns, pod string, port int) (kube.Tunnel, error) {
		ports = append(ports, port)
		switch pod {
		case "forbidden-head":
			return nil, fault.Errorf(fault.Forbidden, "forbidden: you cannot create pods/portforward")
		default:
			<-ctx.Done()
			return nil, ctx.Err()
		}
	}
	views := rayViews(context.Background(), &kube.Clients{Tunnels: open}, s, RayQuery{Timeout: 50 * time.Millisecond, Parallel: 1}, nil)
	got := map[string]rayapi.Reason{}
	for _, v := range views {
		if v.Unreachable == nil {
			t.Fatalf("%s: read, with no dashboard", v.Cluster)
		}
		got[v.Cluster] = v.Unreachable.Reason
	}
	if got["forbidden"] != rayapi.Forbidden || got["headless"] != rayapi.NoHead || got["slow"] != rayapi.Timeout {
		t.Fatalf("reasons %v", got)
	}
	for _, p := range ports {
		if p != 8266 {
			t.Fatalf("forwarded to port %d, want the head's dashboard port 8266", p)
		}
	}
}

// The run's deadline bounds all reads: with one at a time and every dashboard hanging, the
// clusters whose turn never came are unreachable by the deadline, and the run takes about the
// deadline, not the sum of the timeouts.
func TestReadRayViewsDeadline(t *testing.T) {
	s := rayScene("a", "b", "c", "d")
	var opened atomic.Int32
	open := func(ctx context.Context, ns, pod string, port int) (kube.Tunnel, error) {
		opened.Add(1)
		<-ctx.Done()
		return nil, errors.New("canceled")
	}
	start := time.Now()
	views := rayViews(context.Background(), &kube.Clients{Tunnels: open}, s, RayQuery{Timeout: time.Hour, Deadline: 100 * time.Millisecond, Parallel: 1}, nil)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s with a 100ms deadline", d)
	}
	deadline := 0
	for _, v := range views {
		if v.Unreachable == nil {
			t.Fatalf("%s read", v.Cluster)
		}
		if v.Unreachable.Reason == rayapi.Deadline {
			deadline++
		}
	}
	if opened.Load() != 1 || deadline != 3 {
		t.Fatalf("opened %d, %d past the deadline; want 1 and 3", opened.Load(), deadline)
	}
}

func TestReadRayViewsOnlyTheTarget(t *testing.T) {
	s := rayScene("a", "b")
	var pods []string
	open := func(ctx context.Context, ns, pod string, port int) (kube.Tunnel, error) {
		pods = append(pods, pod)
		return nil, errors.New("refused")
	}
	views := rayViews(context.Background(), &kube.Clients{Tunnels: open}, s, RayQuery{Target: &diagnose.Target{Name: "b"}}, diagnose.Checked)
	if len(views) != 1 || views[0].Cluster != "b" || len(pods) != 1 || pods[0] != "b-head" || views[0].Unreachable.Reason != rayapi.Unconnected {
		t.Fatalf("views %+v, forwarded to %v", views, pods)
	}
}
