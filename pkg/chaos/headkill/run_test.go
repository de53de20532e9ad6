package headkill

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// fakeCluster is Cluster without a cluster: a RayCluster demo with one head, and a record of
// the kills asked for. The watches deliver the head once and nothing else.
type fakeCluster struct {
	mu      sync.Mutex
	head    *corev1.Pod
	headNow *corev1.Pod // what a GET returns at the kill (the head, or its replacement)
	kills   []string    // "delete" or "delete (dry run)"
	killErr error
}

func newFakeCluster() *fakeCluster {
	h := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "demo-head-x7k2p", Namespace: "ml", UID: "uid-head",
		Labels: map[string]string{ray.LabelCluster: "demo", ray.LabelNodeType: "head"}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	return &fakeCluster{head: h, headNow: h}
}

func (f *fakeCluster) GetRayCluster(_ context.Context, ns, name string) (*rayv1.RayCluster, error) {
	if name != "demo" {
		return nil, errors.New(`raycluster "` + name + `" not found`)
	}
	return &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}, nil
}
func (f *fakeCluster) GetRayService(context.Context, string, string) (*rayv1.RayService, error) {
	return nil, errors.New("no RayService")
}
func (f *fakeCluster) GetService(context.Context, string, string) (*corev1.Service, error) {
	return nil, errors.New("no Service")
}
func (f *fakeCluster) GetPodByName(context.Context, string, string) (*corev1.Pod, error) {
	return f.headNow.DeepCopy(), nil
}
func (f *fakeCluster) ListPodsMatching(context.Context, string, string) ([]corev1.Pod, error) {
	return []corev1.Pod{*f.head.DeepCopy()}, nil
}
func (f *fakeCluster) ListReadyEndpoints(context.Context, string, string, string) ([]kube.ReadyEndpoint, error) {
	return nil, nil
}
func (f *fakeCluster) KillHeadPod(_ context.Context, _ *corev1.Pod, mode kube.KillMode, dryRun bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := string(mode)
	if dryRun {
		k += " (dry run)"
	}
	f.kills = append(f.kills, k)
	return f.killErr
}
func (f *fakeCluster) RunClusterWatch(_, _ context.Context, w kube.ClusterWatch) (<-chan error, error) {
	w.OnPod(f.head, false)
	errs := make(chan error)
	close(errs)
	return errs, nil
}
func (f *fakeCluster) WatchReadyEndpoints(context.Context, string, string, string, chan<- struct{}, func([]kube.ReadyEndpoint)) error {
	return errors.New("no Service")
}
func (f *fakeCluster) OpenTunnel(context.Context, string, string, int) (kube.Tunnel, error) {
	return nil, errors.New("no port-forward")
}

// urlSettings probe a loopback server for a short run.
func urlSettings(url string) Settings {
	return Settings{Namespace: "ml", Cluster: "demo", Mode: "delete", Aim: experiment.Aim{Target: url, After: 300 * time.Millisecond},
		ProbeSettings: experiment.ProbeSettings{Method: "GET", Rate: "50/s", Warmup: 200 * time.Millisecond, RequestTimeout: time.Second,
			ProgressEvery: time.Second, MaxErrors: 0, MaxErrorsSet: true}}
}

func TestRunKillsOnceAfterAHealthyWarmup(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	f := newFakeCluster()
	var warned strings.Builder
	s := urlSettings(srv.URL)
	s.Warn = &warned
	s.Doctor = func(context.Context) ([]availability.Advice, error) {
		return nil, errors.New("forbidden: you cannot list pods")
	}
	r, outcome, err := Run(context.Background(), f, s)
	if err != nil {
		t.Fatal(err)
	}
	if !outcome.Passed || r.Totals.Requests == 0 || r.Totals.Errors != 0 || r.Probe.Reference != "kill" {
		t.Errorf("outcome %+v totals %+v reference %s", outcome, r.Totals, r.Probe.Reference)
	}
	if got := strings.Join(f.kills, "; "); got != "delete (dry run); delete" {
		t.Errorf("kills: %s", got)
	}
	if !strings.Contains(warned.String(), "warning: no doctor advice: forbidden") {
		t.Errorf("warnings: %q", warned.String())
	}
}

func TestRunRefusalsKillNothing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	defer srv.Close()
	declined := errors.New("declined")
	for _, c := range []struct {
		name   string
		change func(*Settings, *fakeCluster)
		kind   fault.Kind
		want   string
		kills  string
	}{
		{"not confirmed", func(s *Settings, _ *fakeCluster) { s.Confirm = func(chaos.Confirmation) error { return declined } }, 0, "declined", ""},
		{"pdb", func(s *Settings, f *fakeCluster) {
			s.Mode, f.killErr = "evict", &kube.Refused{Pod: "demo-head-x7k2p", Code: 429, Message: "would violate the budget."}
		}, fault.API, "the API refused to evict pod demo-head-x7k2p (429): would violate the budget: a PodDisruptionBudget blocks the eviction; nothing was killed (use mode delete to ignore PodDisruptionBudgets)", "evict (dry run)"},
		{"warm-up fails", func(*Settings, *fakeCluster) {}, fault.Invalid, " warm-up requests to http://127.0.0.1:", "delete (dry run)"},
		{"unknown cluster", func(s *Settings, _ *fakeCluster) { s.Cluster = "nope" }, 0, `raycluster "nope" not found`, ""},
		{"bad rate", func(s *Settings, _ *fakeCluster) { s.Rate = "5/h" }, fault.Invalid, `rate "5/h": use requests per second or minute`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, s := newFakeCluster(), urlSettings(srv.URL)
			c.change(&s, f)
			_, _, err := Run(context.Background(), f, s)
			if err == nil || !strings.Contains(err.Error(), c.want) || fault.KindOf(err) != c.kind {
				t.Errorf("err = %v (kind %d), want %q (kind %d)", err, fault.KindOf(err), c.want, c.kind)
			}
			if got := strings.Join(f.kills, "; "); got != c.kills {
				t.Errorf("kills %q, want %q", got, c.kills)
			}
		})
	}
}

// A head replaced under the same name during the warm-up is not killed, and the run says so as
// NotFound (the target no longer exists), not as a missed SLO: none was measured.
func TestKillSparesAHeadReplacedDuringTheWarmup(t *testing.T) {
	f := newFakeCluster()
	f.headNow = f.head.DeepCopy()
	f.headNow.UID = "uid-of-the-replacement"
	err := killHead(context.Background(), f, f.head, kube.KillDelete)
	if fault.KindOf(err) != fault.NotFound || !strings.Contains(err.Error(), "was replaced during the warm-up") ||
		!strings.Contains(err.Error(), "nothing was killed; run again to target the new head") {
		t.Fatalf("err = %v (kind %d)", err, fault.KindOf(err))
	}
	if len(f.kills) != 0 {
		t.Fatalf("the replacement head was killed: %v", f.kills)
	}
}

func TestTargetPath(t *testing.T) {
	s := urlSettings("http://serve.example:8000/healthz?x=1")
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.targetBase() != "http://serve.example:8000" || s.config().Path != "/healthz?x=1" {
		t.Fatalf("base %q path %q", s.targetBase(), s.config().Path)
	}
}
