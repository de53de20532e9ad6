package upgrade

import (
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/experiment"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// fakeCluster plays the API server and KubeRay's RayService controller: a real patch (not a dry
// run) starts the upgrade script, which creates pending cluster "new", makes its head Ready,
// its apps RUNNING (unless neverRunning), switches the active cluster and deletes "old".
type fakeCluster struct {
	t            *testing.T
	serve        *httptest.Server
	neverRunning bool

	mu      sync.Mutex
	rs      *rayv1.RayService
	patches []string // real patches applied
	dryRuns int
	w       kube.ClusterWatch
	reads   int
	// onRead, when set, changes the stored RayService after the read numbered n (1 is resolve's),
	// as KubeRay or another user would between two reads.
	onRead func(n int, rs *rayv1.RayService)

	// An incremental upgrade's Gateway, HTTPRoute and data plane Services (gateway_test.go);
	// nil Gateway: none exists.
	gateway   *ray.Gateway
	route     *ray.HTTPRoute
	dataPlane []corev1.Service
}

func newFake(t *testing.T) *fakeCluster {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc", Generation: 1, ResourceVersion: "10"}}
	rs.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers = []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.46.0"}}
	rs.Spec.RayClusterSpec.WorkerGroupSpecs = []rayv1.WorkerGroupSpec{{GroupName: "w"}}
	rs.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template.Spec.Containers = []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.46.0"}}
	rs.Status.ActiveServiceStatus = rayv1.RayServiceStatus{RayClusterName: "old",
		Applications: map[string]rayv1.AppStatus{"app": {Status: rayv1.ApplicationStatusEnum.RUNNING}}}
	return &fakeCluster{t: t, serve: srv, rs: rs}
}

func (f *fakeCluster) GetRayService(context.Context, string, string) (*rayv1.RayService, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	rs := f.rs.DeepCopy()
	if f.onRead != nil {
		f.onRead(f.reads, f.rs)
	}
	return rs, nil
}

func (f *fakeCluster) GetService(_ context.Context, ns, name string) (*corev1.Service, error) {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "serve", Port: 8000}, {Name: "http", Port: 8080}}}}, nil
}

// PatchRayService applies only what the image patch changes (the Ray containers' images); the
// generation moves when an image changes.
func (f *fakeCluster) PatchRayService(_ context.Context, _, _ string, patch []byte, dryRun bool) (*rayv1.RayService, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var p struct {
		Spec struct {
			Config rayv1.RayClusterSpec `json:"rayClusterConfig"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		f.t.Fatalf("patch %s: %v", patch, err)
	}
	after := f.rs.DeepCopy()
	if cs := p.Spec.Config.HeadGroupSpec.Template.Spec.Containers; len(cs) > 0 && cs[0].Image != after.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image {
		after.Spec.RayClusterSpec.HeadGroupSpec = p.Spec.Config.HeadGroupSpec
		after.Spec.RayClusterSpec.WorkerGroupSpecs = p.Spec.Config.WorkerGroupSpecs
		after.Generation++
	}
	if dryRun {
		f.dryRuns++
		return after, nil
	}
	f.patches = append(f.patches, string(patch))
	f.rs = after
	go f.playKubeRay()
	return after.DeepCopy(), nil
}

func (f *fakeCluster) status(change func(*rayv1.RayServiceStatuses)) {
	time.Sleep(50 * time.Millisecond)
	f.mu.Lock()
	change(&f.rs.Status)
	rs := f.rs.DeepCopy()
	f.mu.Unlock()
	f.w.OnRayService(rs, false)
}

func (f *fakeCluster) playKubeRay() {
	if f.gateway != nil {
		f.playIncremental()
		return
	}
	f.status(func(s *rayv1.RayServiceStatuses) {
		s.PendingServiceStatus = rayv1.RayServiceStatus{RayClusterName: "new",
			Applications: map[string]rayv1.AppStatus{"app": {Status: rayv1.ApplicationStatusEnum.DEPLOYING}}}
	})
	head := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "new-head", Labels: map[string]string{ray.LabelCluster: "new", ray.LabelNodeType: "head"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	f.w.OnPod(head, false)
	if f.neverRunning {
		return
	}
	f.status(func(s *rayv1.RayServiceStatuses) {
		s.PendingServiceStatus.Applications = map[string]rayv1.AppStatus{"app": {Status: rayv1.ApplicationStatusEnum.RUNNING}}
	})
	f.status(func(s *rayv1.RayServiceStatuses) {
		s.ActiveServiceStatus, s.PendingServiceStatus = s.PendingServiceStatus, rayv1.RayServiceStatus{}
	})
	time.Sleep(50 * time.Millisecond)
	f.w.OnRayCluster(&rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "old"}}, true)
}

func (f *fakeCluster) RunClusterWatch(_, _ context.Context, w kube.ClusterWatch) (<-chan error, error) {
	f.w = w
	rs, _ := f.GetRayService(context.Background(), "", "")
	w.OnRayService(rs, false)
	return make(chan error), nil
}

func (f *fakeCluster) WatchReadyEndpoints(ctx context.Context, _, _, _ string, _ chan<- struct{}, handle func([]kube.ReadyEndpoint)) error {
	handle([]kube.ReadyEndpoint{{Pod: "old-worker", Port: 8000}})
	<-ctx.Done()
	return nil
}

type tunnel struct{ addr string }

func (t tunnel) Addr() string          { return t.addr }
func (t tunnel) Done() <-chan struct{} { return nil }
func (t tunnel) Close()                {}

func (f *fakeCluster) OpenTunnel(context.Context, string, string, int) (kube.Tunnel, error) {
	return tunnel{strings.TrimPrefix(f.serve.URL, "http://")}, nil
}

func settings() Settings {
	return Settings{Namespace: "ns", RayService: "svc", Image: "rayproject/ray:2.47.0", Timeout: 9 * time.Second,
		ProbeSettings: experiment.ProbeSettings{Rate: "50/s", Method: "GET", Warmup: 300 * time.Millisecond,
			RequestTimeout: 500 * time.Millisecond, ProgressEvery: time.Second, MaxErrors: 0, MaxErrorsSet: true}}
}

func TestRunHealthyUpgrade(t *testing.T) {
	f := newFake(t)
	r, outcome, err := Run(context.Background(), f, settings())
	if err != nil {
		t.Fatal(err)
	}
	if !outcome.Passed || !r.Verdict.Passed {
		t.Fatalf("outcome %+v verdict %+v, want passed", outcome, r.Verdict)
	}
	u := r.Upgrade
	if !u.Switched || u.NewCluster != "new" || u.OldCluster != "old" || u.PendingClusterCreatedMs == nil || u.NewHeadReadyMs == nil ||
		u.ServeAppsReadyMs == nil || u.ActiveSwitchedMs == nil || u.OldClusterDeletedMs == nil {
		t.Fatalf("upgrade steps %+v, want every step seen", u)
	}
	if !(*u.PendingClusterCreatedMs <= *u.ServeAppsReadyMs && *u.ServeAppsReadyMs <= *u.ActiveSwitchedMs && *u.ActiveSwitchedMs <= *u.OldClusterDeletedMs) {
		t.Errorf("steps out of order: %+v", u)
	}
	if r.Totals.Requests == 0 || r.Totals.Errors != 0 || r.Probe.PatchAtMs == nil {
		t.Errorf("totals %+v probe %+v", r.Totals, r.Probe)
	}
	if len(f.patches) != 1 || !strings.Contains(f.patches[0], "rayproject/ray:2.47.0") || !strings.Contains(f.patches[0], `"resourceVersion":"10"`) {
		t.Errorf("patches applied: %q", f.patches)
	}
	if r.Verdict.Checks[0].Name != "switch" || !r.Verdict.Checks[0].Passed {
		t.Errorf("checks %+v", r.Verdict.Checks)
	}
}

// A --patch is applied with the resourceVersion of a read made after the warm-up, not the one
// resolve saw: KubeRay writes the status in between.
func TestRunPinsTheUserPatch(t *testing.T) {
	f := newFake(t)
	f.onRead = func(n int, rs *rayv1.RayService) { rs.ResourceVersion = fmt.Sprint(10 + n) }
	s := settings()
	s.Image, s.Patch = "", `{"spec":{"rayClusterConfig":{"headGroupSpec":{"template":{"spec":{"containers":[{"name":"ray-head","image":"rayproject/ray:2.47.0"}]}}}}}}`
	_, outcome, err := Run(context.Background(), f, s)
	if err != nil || !outcome.Passed {
		t.Fatalf("err %v outcome %+v", err, outcome)
	}
	if len(f.patches) != 1 || !strings.Contains(f.patches[0], `"resourceVersion":"1`) || strings.Contains(f.patches[0], `"resourceVersion":"10"`) {
		t.Errorf("patches applied: %q, want one pinned to a read after the warm-up", f.patches)
	}
}

// A RayService whose spec changed, or that started an upgrade, between resolve and the patch is
// not patched.
func TestApplyRefusesAChangedRayService(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*rayv1.RayService)
		want   string
	}{
		{"spec changed", func(rs *rayv1.RayService) { rs.Generation = 2 }, "RayService ns/svc changed since it was read (generation 1, now 2): nothing was patched; run the command again"},
		{"upgrade started", func(rs *rayv1.RayService) { rs.Status.PendingServiceStatus.RayClusterName = "other" },
			"RayService ns/svc started upgrading to RayCluster other during the warm-up: nothing was patched"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			f.onRead = func(n int, rs *rayv1.RayService) {
				if n == 1 {
					c.change(rs)
				}
			}
			_, _, err := Run(context.Background(), f, settings())
			if fault.KindOf(err) != fault.API || err == nil || err.Error() != c.want {
				t.Fatalf("err = %v (kind %v), want %q", err, fault.KindOf(err), c.want)
			}
			if len(f.patches) != 0 {
				t.Errorf("patched: %q", f.patches)
			}
		})
	}
}

func TestPinnedPatch(t *testing.T) {
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7"}}
	for _, c := range []struct{ in, want string }{
		{`{"spec":{"a":1}}`, `{"metadata":{"resourceVersion":"7"},"spec":{"a":1}}`},
		{`{"metadata":{"labels":{"x":"y"}},"spec":{}}`, `{"metadata":{"labels":{"x":"y"},"resourceVersion":"7"},"spec":{}}`},
		{`{"metadata":{"resourceVersion":"3"}}`, `{"metadata":{"resourceVersion":"3"}}`},
	} {
		got, err := PinnedPatch([]byte(c.in), rs)
		if err != nil || string(got) != c.want {
			t.Errorf("PinnedPatch(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	if _, err := PinnedPatch([]byte(`{"metadata":[1]}`), rs); fault.KindOf(err) != fault.Invalid {
		t.Errorf("metadata not an object: %v", err)
	}
}

// runNeverRunning runs an upgrade on f whose new cluster never gets going, with a short timeout.
func runNeverRunning(t *testing.T, f *fakeCluster) (*Report, chaos.Outcome) {
	t.Helper()
	f.neverRunning = true
	s := settings()
	s.Timeout = 7 * time.Second
	r, outcome, err := Run(context.Background(), f, s)
	if err != nil {
		t.Fatal(err)
	}
	return r, outcome
}

func TestRunNeverReadyIsNotPassed(t *testing.T) {
	r, outcome := runNeverRunning(t, newFake(t))
	if outcome.Passed || r.Verdict.Passed || outcome.Note == nil {
		t.Fatalf("outcome %+v verdict %+v, want not passed with a note", outcome, r.Verdict)
	}
	u := r.Upgrade
	if u.Switched || u.PendingClusterCreatedMs == nil || u.NewHeadReadyMs == nil || u.ServeAppsReadyMs != nil || u.OldClusterDeletedMs != nil {
		t.Errorf("upgrade steps %+v", u)
	}
	for _, want := range []string{"pending cluster new", "its head Ready", "apps app DEPLOYING", "traffic still on old"} {
		if !strings.Contains(u.LastSeen, want) || !strings.Contains(outcome.Note.Error(), want) {
			t.Errorf("last seen %q / note %q: want %q", u.LastSeen, outcome.Note, want)
		}
	}
	if got := r.Verdict.Checks[0]; got.Name != "switch" || got.Passed {
		t.Errorf("switch check %+v", got)
	}
	if r.Totals.Errors != 0 {
		t.Errorf("the old cluster kept serving: %+v", r.Totals)
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	f := newFake(t)
	p, err := DryRun(context.Background(), f, settings())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.patches) != 0 || f.dryRuns != 1 || f.w.OnPod != nil {
		t.Fatalf("dry run applied %q, %d dry runs, watches started %v", f.patches, f.dryRuns, f.w.OnPod != nil)
	}
	if p.Generation != 1 || p.GenerationAfter != 2 || p.ActiveCluster != "old" || p.ServerDryRun != "accepted" || !strings.Contains(string(p.Patch), "2.47.0") {
		t.Errorf("plan %+v", p)
	}
}

func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*Settings, *fakeCluster)
		kind   fault.Kind
		want   string
	}{
		{"neither", func(s *Settings, _ *fakeCluster) { s.Image = "" }, fault.Invalid, "say what to change: image IMAGE or patch"},
		{"both", func(s *Settings, _ *fakeCluster) { s.Patch = `{"spec":{}}` }, fault.Invalid, "image and patch exclude each other"},
		{"bad patch", func(s *Settings, _ *fakeCluster) { s.Image, s.Patch = "", "[1]" }, fault.Invalid, "patch is not a JSON object"},
		{"same image", func(s *Settings, _ *fakeCluster) { s.Image = "rayproject/ray:2.46.0" }, fault.Invalid, "already runs image rayproject/ray:2.46.0"},
		{"no-op patch", func(s *Settings, _ *fakeCluster) { s.Image, s.Patch = "", `{"metadata":{"labels":{"a":"b"}}}` }, fault.Invalid, "changes nothing in the spec"},
		{"upgrading", func(_ *Settings, f *fakeCluster) { f.rs.Status.PendingServiceStatus.RayClusterName = "p" }, fault.Invalid, "already upgrading to RayCluster p"},
		{"strategy None", func(_ *Settings, f *fakeCluster) {
			none := rayv1.RayServiceUpgradeNone
			f.rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: &none}
		}, fault.Invalid, "upgradeStrategy.type None"},
		{"short timeout", func(s *Settings, _ *fakeCluster) { s.Timeout = 5 * time.Second }, fault.Invalid, "timeout 5s leaves no time after the patch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			s := settings()
			c.change(&s, f)
			_, _, err := Run(context.Background(), f, s)
			if fault.KindOf(err) != c.kind || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v (kind %v), want %v %q", err, fault.KindOf(err), c.kind, c.want)
			}
			if len(f.patches) != 0 {
				t.Errorf("patched despite the refusal: %q", f.patches)
			}
		})
	}
}
