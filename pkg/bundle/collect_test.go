package bundle

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// source answers every read at once, or, with block, only when the context ends; it counts the
// reads and the most that ran at once.
type source struct {
	block          bool
	mu             sync.Mutex
	running, most  int
	lists, logs    int
	servicesListed []corev1.Service
	tars           map[string]tarAnswer // pod -> its exec's answer
	execs          []string
}

type tarAnswer struct {
	stream []byte
	err    error
}

func (s *source) enter(ctx context.Context) error {
	s.mu.Lock()
	s.running++
	s.most = max(s.most, s.running)
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.running--; s.mu.Unlock() }()
	if s.block {
		<-ctx.Done()
		return ctx.Err()
	}
	time.Sleep(2 * time.Millisecond)
	return nil
}

func (s *source) list(ctx context.Context) error {
	s.mu.Lock()
	s.lists++
	s.mu.Unlock()
	return s.enter(ctx)
}

func (s *source) ListServicesMatching(ctx context.Context, _, _ string) ([]corev1.Service, error) {
	return s.servicesListed, s.list(ctx)
}
func (s *source) ListEndpointSlicesMatching(ctx context.Context, _, _ string) ([]discoveryv1.EndpointSlice, error) {
	return nil, s.list(ctx)
}
func (s *source) ListJobsMatching(ctx context.Context, _, _ string) ([]batchv1.Job, error) {
	return nil, s.list(ctx)
}
func (s *source) ListEventsKept(ctx context.Context, _ string, _ func(*corev1.Event) bool) ([]corev1.Event, error) {
	return nil, s.list(ctx)
}
func (s *source) ListPodsMatching(ctx context.Context, _, _ string) ([]corev1.Pod, error) {
	return nil, s.list(ctx)
}
func (s *source) PodLog(ctx context.Context, _, _ string, _ *corev1.PodLogOptions) ([]byte, error) {
	s.mu.Lock()
	s.logs++
	s.mu.Unlock()
	return []byte("log\n"), s.enter(ctx)
}
func (s *source) ReadAPIVersions() (kube.APIVersions, error) {
	return kube.APIVersions{Server: "v1.34.0"}, nil
}

// Reads run at most Parallel at once; the serve Service the snapshot read (it carries no cluster
// label) is kept beside those the LIST by label found.
func TestCollectParallelLimit(t *testing.T) {
	s := scene()
	s.Serve = []corev1.Service{{ObjectMeta: metav1.ObjectMeta{Name: "svc-serve-svc", Namespace: "ml",
		Labels: map[string]string{ray.LabelServe: "svc-serve"}, OwnerReferences: []metav1.OwnerReference{{Kind: "RayService", Name: "svc", UID: "uid-svc"}}}}}
	p := MakePlan(s, nil, PlanOptions{Logs: true})
	src := &source{servicesListed: []corev1.Service{{ObjectMeta: metav1.ObjectMeta{Name: "a-head-svc", Namespace: "ml", Labels: map[string]string{ray.LabelCluster: "a"}}}}}
	got := Collect(context.Background(), src, p, CollectOptions{Parallel: 2})
	if src.most > 2 || src.most < 2 {
		t.Errorf("%d reads ran at once, want 2", src.most)
	}
	// One namespace: services, endpointslices, jobs, events (the budgets are the snapshot's); the
	// operator's pods (its Deployment has no selector here: a gap, no LIST).
	if src.lists != 4 || src.logs != len(p.Logs) || len(got.Gaps) != 1 {
		t.Errorf("%d LISTs (want 4), %d log reads (want %d), gaps %v", src.lists, src.logs, len(p.Logs), got.Gaps)
	}
	var names []string
	for _, sv := range got.Services {
		names = append(names, sv.Name)
	}
	if strings.Join(names, ",") != "a-head-svc,svc-serve-svc" {
		t.Errorf("services %v", names)
	}
}

// The total timeout cuts the reads short: each is a gap saying so, and Collect returns.
func TestCollectTimeout(t *testing.T) {
	p := MakePlan(scene(), nil, PlanOptions{Logs: true})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	got := Collect(ctx, &source{block: true}, p, CollectOptions{Parallel: 4})
	if time.Since(start) > 5*time.Second {
		t.Fatalf("Collect took %s after a 50ms timeout", time.Since(start))
	}
	n := 0
	for _, g := range got.Gaps {
		// The versions read answers at once here, unless a loaded machine gave it no slot
		// before the timeout: it is not counted either way.
		if g.Reason == "not read before the bundle's --timeout" && g.What != "read versions (discovery)" {
			n++
		}
	}
	if n != 4+len(p.Logs) {
		t.Errorf("%d reads cut short by the timeout, want %d: %v", n, 4+len(p.Logs), got.Gaps)
	}
}

// TarDir plays the exec of tar in a head: the stream, or the error, set for that pod.
func (s *source) TarDir(ctx context.Context, _, pod, _, dir string, limit int64) ([]byte, bool, error) {
	s.mu.Lock()
	s.execs = append(s.execs, pod+":"+dir)
	t := s.tars[pod]
	s.mu.Unlock()
	if t.err != nil {
		return nil, false, t.err
	}
	if limit > 0 && int64(len(t.stream)) > limit {
		return t.stream[:limit], true, s.enter(ctx)
	}
	return t.stream, false, s.enter(ctx)
}
