package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/golden"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

type hkHarness struct {
	kube   *fake.Clientset
	ray    *rayfake.Clientset
	f      *cmdutil.Factory
	out    *bytes.Buffer
	errOut *bytes.Buffer
	writeRecorder
}

func ptrTo[T any](v T) *T { return &v }

// hkObjects is a RayCluster demo with its head and a worker, a serve Service and its
// EndpointSlice with both pods ready.
func hkObjects() ([]runtime.Object, []runtime.Object) {
	hd := head("demo-head-x7k2p")
	hd.UID = "uid-head"
	hd.Spec.TerminationGracePeriodSeconds = ptrTo(int64(30))
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "ml"}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "demo-serve-svc", Namespace: "ml"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "serve", Port: 8000}}}}
	ep := func(pod string) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptrTo(true)},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: pod}}
	}
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "demo-serve-svc-abc", Namespace: "ml",
		Labels: map[string]string{discoveryv1.LabelServiceName: "demo-serve-svc"}},
		Ports:     []discoveryv1.EndpointPort{{Name: ptrTo("serve"), Port: ptrTo(int32(8000))}},
		Endpoints: []discoveryv1.Endpoint{ep("demo-worker-1"), ep("demo-head-x7k2p")}}
	return []runtime.Object{hd, svc, slice}, []runtime.Object{rc}
}

func newHKHarness(t *testing.T, kubeObjs, rayObjs []runtime.Object) *hkHarness {
	t.Helper()
	h := &hkHarness{kube: fake.NewClientset(kubeObjs...), ray: rayfake.NewSimpleClientset(rayObjs...)}
	// The fake tracker ignores dry-run; the API server deletes nothing for it, so neither does this.
	h.kube.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if d := a.(k8stesting.DeleteActionImpl); len(d.DeleteOptions.DryRun) > 0 {
			return true, nil, nil
		}
		return false, nil, nil
	})
	h.record(h.kube)
	h.f, h.out, h.errOut = testFactory("ml", &kube.Clients{Kube: h.kube, Ray: h.ray})
	h.f.Now = func() time.Time { return time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC) }
	return h
}

func (h *hkHarness) run(args ...string) error { return h.runCmd(full(NewHeadKillCmd), args...) }

// runCmd runs the command newCmd makes (head-kill, upgrade) on the harness's fakes.
func (h *hkHarness) runCmd(newCmd func(*cmdutil.Factory) *cobra.Command, args ...string) error {
	return execute(h.f, h.out, h.errOut, newCmd, args...)
}

func (h *hkHarness) writeActions() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, a := range h.writes {
		s := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		if d, ok := a.(k8stesting.DeleteActionImpl); ok && len(d.DeleteOptions.DryRun) > 0 {
			s += " (dry run)"
		}
		out = append(out, s)
	}
	return out
}

func TestHeadKillDryRun(t *testing.T) {
	k, r := hkObjects()
	h := newHKHarness(t, k, r)
	if err := h.run("demo", "--service", "demo-serve-svc", "--port", "8000", "--dry-run", "--warmup", "5s", "--after", "30s",
		"--rate", "20/s", "--max-errors", "3"); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, filepath.Join("testdata", "headkill-dry-run.txt"), []byte(h.out.String()))
	if got := strings.Join(h.writeActions(), "; "); got != "delete pods (dry run)" {
		t.Fatalf("writes %q, want only the dry-run delete", got)
	}
}

// TestHeadKillDryRunJSON: -o json prints the plan as one JSON document, as heal --dry-run -o
// json does, after the server's dry run; a refused dry run leaves stdout empty.
func TestHeadKillDryRunJSON(t *testing.T) {
	k, r := hkObjects()
	h := newHKHarness(t, k, r)
	if err := h.run("demo", "--service", "demo-serve-svc", "--port", "8000", "--dry-run", "--warmup", "5s", "--until-recovered",
		"--timeout", "2m", "--rate", "20/s", "--min-availability", "99.5", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, filepath.Join("testdata", "headkill-dry-run.json"), []byte(h.out.String()))

	h = newHKHarness(t, k, r)
	h.kube.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "demo-head-x7k2p", nil)
	})
	err := h.run("demo", "--target", "http://127.0.0.1:1", "--dry-run", "-o", "json")
	if exit.CodeOf(err) != exit.Forbidden || h.out.Len() != 0 {
		t.Fatalf("refused dry run: exit %d (%v), stdout %q", exit.CodeOf(err), err, h.out.String())
	}
}

func TestHeadKillRefusals(t *testing.T) {
	svc := []string{"demo", "--service", "demo-serve-svc", "--port", "8000"}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "demo-head-x7k2p", nil)
	for _, c := range []struct {
		name    string
		args    []string
		reactor func(*hkHarness)
		code    int
		want    string
	}{
		{"no yes", svc, nil, exit.NotConfirmed, "refusing to delete (grace period 30s) head pod ml/demo-head-x7k2p of RayCluster demo without --yes"},
		{"forbidden delete", append(svc, "--yes"), func(h *hkHarness) {
			h.kube.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, forbidden })
		}, exit.Forbidden, `forbidden: you cannot delete pods in namespace "ml"`},
		{"forbidden evict", append(svc, "--mode", "evict", "--yes"), func(h *hkHarness) {
			h.kube.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				return a.GetSubresource() == "eviction", nil, forbidden
			})
		}, exit.Forbidden, `you cannot create pods/eviction`},
		{"pdb 429", append(svc, "--mode", "evict", "--yes"), func(h *hkHarness) {
			h.kube.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				return a.GetSubresource() == "eviction", nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
			})
		}, exit.API, "the API refused to evict pod demo-head-x7k2p (429): Cannot evict pod as it would violate the pod's disruption budget: a PodDisruptionBudget blocks the eviction; nothing was killed"},
		{"unknown cluster", []string{"nope", "--target", "http://127.0.0.1:1", "--yes"}, nil, exit.NotFound, `RayCluster "nope" not found in namespace "ml"; list them with: kubectl get rayclusters -n ml`},
		{"unknown service", []string{"demo", "--service", "nope", "--port", "8000", "--yes"}, nil, exit.NotFound, `Service "nope" not found in namespace "ml"; list them with: kubectl get services -n ml`},
		{"no ready endpoints", append(svc, "--yes"), func(h *hkHarness) {
			_ = h.kube.DiscoveryV1().EndpointSlices("ml").Delete(context.Background(), "demo-serve-svc-abc", metav1.DeleteOptions{})
			h.writes = nil
		}, exit.NotFound, "Service ml/demo-serve-svc has no ready endpoints"},
		// A dry run reads the endpoints itself, and refuses as the run would, before the kill's
		// dry run.
		{"no ready endpoints, dry run", append(svc, "--dry-run"), func(h *hkHarness) {
			_ = h.kube.DiscoveryV1().EndpointSlices("ml").Delete(context.Background(), "demo-serve-svc-abc", metav1.DeleteOptions{})
			h.writes = nil
		}, exit.NotFound, "Service ml/demo-serve-svc has no ready endpoints, so there is nothing to probe and nothing was killed"},
		{"wrong port", []string{"demo", "--service", "demo-serve-svc", "--port", "9000", "--yes"}, nil, exit.Usage, "has no TCP port 9000 (its ports: 8000)"},
		{"no live head", []string{"demo", "--target", "http://127.0.0.1:1", "--yes"}, func(h *hkHarness) {
			_ = h.kube.CoreV1().Pods("ml").Delete(context.Background(), "demo-head-x7k2p", metav1.DeleteOptions{})
			h.writes = nil
		}, exit.NotFound, "has no live head pod to kill"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, r := hkObjects()
			h := newHKHarness(t, k, r)
			if c.reactor != nil {
				c.reactor(h)
			}
			err := h.run(c.args...)
			if exit.CodeOf(err) != c.code || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want exit %d with %q, got %d: %v", c.code, c.want, exit.CodeOf(err), err)
			}
			for _, w := range h.writeActions() {
				if !strings.HasSuffix(w, "(dry run)") && w != "create pods/eviction" {
					t.Fatalf("a refusal wrote %q", w)
				}
			}
			if h.out.Len() != 0 {
				t.Fatalf("stdout: %q", h.out.String())
			}
		})
	}
}

// TestHeadKillBadFlags: every bad flag is refused before the API is called.
func TestHeadKillBadFlags(t *testing.T) {
	u := []string{"demo", "--target", "http://127.0.0.1:1"}
	assertBadFlags(t, full(NewHeadKillCmd), []badFlags{
		{append(u, "--rate", "0"), `--rate "0" is not positive`},
		{append(u, "--rate", "-5/s"), "is not positive"},
		{append(u, "--rate", "1e9"), "above the probe's limit of 50000/s"},
		{append(u, "--rate", "5/h"), "per second or minute"},
		{append(u, "--rate", "NaN"), "not a number"},
		{append(u, "--warmup", "0s"), "--warmup must be positive"},
		{append(u, "--warmup", "10ms", "--rate", "1/s"), "sends no request"},
		{append(u, "--after", "0s"), "--after must be positive"},
		{append(u, "--after", "5s", "--until-recovered"), "exclude each other"},
		{append(u, "--until-recovered", "--timeout", "0s"), "--timeout must be positive"},
		{append(u, "--request-timeout", "-1s"), "--request-timeout must be positive"},
		{append(u, "--max-errors", "-1"), "--max-errors must be 0 or more"},
		{append(u, "--min-availability", "100.5"), "percentage from 0 to 100"},
		{append(u, "--mode", "kill"), "--mode must be delete, force or evict"},
		{append(u, "-o", "yaml"), `unknown output format "yaml": use -o text|json|junit`},
		{append(u, "--dry-run", "-o", "junit"), "--dry-run prints a plan, which has no SLO result for JUnit: use -o text or -o json"},
		{append(u, "--header", "A: b", "--header", "Authorization Bearer s3cr3t"), "--header number 2 is not K:V"},
		{append(u, "--service", "s", "--port", "8000"), "exclude each other"},
		{append(u, "--rate", "1000/s", "--after", "1h"), "exceed the probe's limit"},
		{[]string{"demo", "--target", "ftp://x"}, "not an http or https URL"},
		{[]string{"demo", "--target", "http://user:s3cr3t@x:8000/"}, `--target "http://user:xxxxx@x:8000/" has credentials in it`},
		{[]string{"demo", "--target", "http://user:s3cr3t@x:8000 /"}, "--target is not a URL"},
		{[]string{"demo", "--target", "http://x/a", "--path", "/b"}, "give the path once"},
		{[]string{"demo"}, "say what to probe for RayCluster demo"},
		{[]string{"demo", "--service", "s"}, "needs --port N"},
		{[]string{"demo", "--service", "s", "--port", "70000"}, "--port must be from 1 to 65535"},
		{[]string{"pod/x", "--target", "http://x"}, "name a RayCluster, or a RayService as rayservice/NAME"},
		// A report file that cannot be written is found before anything is killed.
		{append(u, "--report-html", "/no/such/dir/r.html"), "--report-html /no/such/dir/r.html: no such file or directory; give a file in a directory you can write"},
		{append(u, "--report-html", os.TempDir()), "is a directory"},
	})
}

// badFlags is a command line and words of the usage error it must get.
type badFlags struct {
	args []string
	want string
}

// assertBadFlags runs each case through the command newCmd makes: each must end in a one-line
// usage error (exit 2) with its words that echoes no header value, before any API call.
func assertBadFlags(t *testing.T, newCmd func(*cmdutil.Factory) *cobra.Command, cases []badFlags) {
	t.Helper()
	for _, c := range cases {
		k, r := hkObjects()
		h := newHKHarness(t, k, r)
		err := h.runCmd(newCmd, c.args...)
		if exit.CodeOf(err) != exit.Usage || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: want a one-line usage error with %q, got %d: %v", c.args, c.want, exit.CodeOf(err), err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%v: the error echoes a header value: %v", c.args, err)
		}
		if n := len(h.kube.Actions()) + len(h.ray.Actions()); n != 0 {
			t.Errorf("%v: %d API calls before the flags were checked", c.args, n)
		}
	}
}

// TestHeadKillRayServiceDefaults: rayservice/NAME kills the head of its active cluster and probes
// NAME-serve-svc on port 8000 unless told otherwise.
func TestHeadKillRayServiceDefaults(t *testing.T) {
	k, r := hkObjects()
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "ml"}}
	rs.Status.ActiveServiceStatus.RayClusterName = "demo"
	h := newHKHarness(t, k, append(r, rs))
	if err := h.run("rayservice/demo", "--dry-run"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Dry run of a head kill of rayservice/demo in namespace ml",
		"Would kill:   pod demo-head-x7k2p (head of RayCluster demo)",
		"Would probe:  GET service/demo-serve-svc:8000/ at 50/s through a port-forward to each of 2 ready endpoints",
	} {
		if !strings.Contains(h.out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, h.out.String())
		}
	}
	rs.Status.ActiveServiceStatus.RayClusterName = ""
	h = newHKHarness(t, k, append(r, rs))
	if err := h.run("rayservice/demo", "--dry-run"); exit.CodeOf(err) != exit.NotFound || !strings.Contains(err.Error(), "has no active RayCluster yet") {
		t.Fatalf("no active cluster: %v", err)
	}
}

// Until the probe starts, a Ctrl-C ends the run at once with nothing killed, even while the
// watches cannot list (client-go's informers retry a failing LIST forever).
func TestHeadKillCtrlCWhileWatchesCannotStart(t *testing.T) {
	k, r := hkObjects()
	h := newHKHarness(t, k, r)
	h.ray.PrependReactor("list", "rayclusters", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
	})
	saved := signalContext
	defer func() { signalContext = saved }()
	signalContext = func(ctx context.Context) (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(300*time.Millisecond, cancel) // the person presses Ctrl-C
		return ctx, cancel
	}
	done := make(chan error, 1)
	go func() { done <- h.run("demo", "--target", "http://127.0.0.1:1", "--yes") }()
	select {
	case err := <-done:
		if exit.CodeOf(err) != exit.Interrupted || !strings.Contains(err.Error(), "nothing was killed") {
			t.Fatalf("err = %v (exit %d), want exit 130 'nothing was killed'", err, exit.CodeOf(err))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ctrl-C did not end the run while the watches were starting")
	}
	for _, w := range h.writeActions() {
		// The server-side dry-run delete is the permission check made before the watches start.
		if (strings.HasPrefix(w, "delete") || strings.HasPrefix(w, "create pods/eviction")) && !strings.HasSuffix(w, "(dry run)") {
			t.Fatalf("killed after Ctrl-C: %v", h.writeActions())
		}
	}
}

// TestHeadKillWarmupFailsKillsNothing: a warm-up against a closed port says first that nothing
// was killed, briefly, with the warm-up's errors; the error line, the last progress line and the
// report count the same requests (exit 2, only the permission check's dry-run delete written).
func TestHeadKillWarmupFailsKillsNothing(t *testing.T) {
	k, r := hkObjects()
	h := newHKHarness(t, k, r)
	err := h.run("demo", "--target", "http://127.0.0.1:1/", "--warmup", "1s", "--rate", "5/s", "--yes")
	m := regexp.MustCompile(`^nothing was killed: (\d+) of (\d+) warm-up requests to http://127.0.0.1:1 failed \(connection (\d+)\); check --target/--service and that it answers 2xx$`).
		FindStringSubmatch(fmt.Sprint(err))
	if exit.CodeOf(err) != exit.Usage || m == nil || m[1] != m[2] || m[1] != m[3] {
		t.Fatalf("exit %d: %v", exit.CodeOf(err), err)
	}
	n := m[1]
	want := "Nothing was killed: the warm-up failed, so the head of demo in namespace ml was left alone.\n" +
		"  probe     GET http://127.0.0.1:1/ at 5/s, warm-up 1s, request timeout 2000ms\n" +
		"  requests  0 ok, " + n + " failed\n" +
		"  by error class: refused=" + n + "\n"
	if h.out.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", h.out.String(), want)
	}
	lines := strings.Split(strings.TrimSpace(h.errOut.String()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, " requests "+n+" ok 0 errors "+n+" ") {
		t.Errorf("last progress line %q does not count the report's %s requests", last, n)
	}
	if got := strings.Join(h.writeActions(), "; "); got != "delete pods (dry run)" {
		t.Errorf("writes %q, want only the dry-run delete", got)
	}
}
