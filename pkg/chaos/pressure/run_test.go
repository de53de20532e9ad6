package pressure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// fakeCluster is Cluster without a cluster: one pod, scripted watches, and a record of what
// was asked.
type fakeCluster struct {
	mu        sync.Mutex
	pod       *corev1.Pod
	injected  []bool // dryRun of each injection
	selectors []string
	pods      *watch.FakeWatcher
	nodes     *watch.FakeWatcher
	watchErr  error

	// The node's pods as listed (the target among them), where each LIST and watch looked ("" for
	// every namespace), and what each scope answers with.
	nodePods      []corev1.Pod
	nodeScopes    []string
	eventScopes   []string
	listErr       map[string]error // by namespace
	nodePodsWatch *watch.FakeWatcher
	nodeWatchErr  error
	events        *watch.FakeWatcher
	eventsErr     map[string]error // by namespace
	// log is what our container's log says (ContainerLog); "" answers as a container not started.
	log string
}

func (f *fakeCluster) ContainerLog(_ context.Context, namespace, pod, _ string, _ int64) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.log == "" {
		return "", fault.Errorf(fault.API, "container is waiting to start")
	}
	return f.log, nil
}

func (f *fakeCluster) ListPodsOnNode(_ context.Context, namespace, node string) ([]corev1.Pod, string, error) {
	f.nodeScopes = append(f.nodeScopes, "list "+namespace)
	if err := f.listErr[namespace]; err != nil {
		return nil, "", err
	}
	var out []corev1.Pod
	for _, p := range append([]corev1.Pod{*f.pod.DeepCopy()}, f.nodePods...) {
		if p.Spec.NodeName == node && (namespace == "" || p.Namespace == namespace) {
			out = append(out, p)
		}
	}
	return out, "42", nil
}

func (f *fakeCluster) WatchPodsOnNode(_ context.Context, namespace, _, rv string) (watch.Interface, error) {
	f.nodeScopes = append(f.nodeScopes, "watch "+namespace+"@"+rv)
	return f.nodePodsWatch, f.nodeWatchErr
}

func (f *fakeCluster) WatchEvictionEvents(_ context.Context, namespace, _ string) (watch.Interface, error) {
	f.eventScopes = append(f.eventScopes, namespace)
	if err := f.eventsErr[namespace]; err != nil {
		return nil, err
	}
	return f.events, nil
}

func (f *fakeCluster) GetPodByName(_ context.Context, _, name string) (*corev1.Pod, error) {
	if name != f.pod.Name {
		return nil, errors.New("pod " + name + " not found")
	}
	return f.pod.DeepCopy(), nil
}

// GetRayCluster knows RayCluster raycluster-demo only.
func (f *fakeCluster) GetRayCluster(_ context.Context, namespace, name string) (*rayv1.RayCluster, error) {
	if name != "raycluster-demo" {
		return nil, fault.Errorf(fault.NotFound, "RayCluster %q not found in namespace %q", name, namespace)
	}
	return &rayv1.RayCluster{}, nil
}

func (f *fakeCluster) ListPodsMatching(_ context.Context, _, selector string) ([]corev1.Pod, error) {
	f.selectors = append(f.selectors, selector)
	if !strings.Contains(selector, "node-type="+f.pod.Labels[ray.LabelNodeType]) || !strings.Contains(selector, "cluster="+f.pod.Labels[ray.LabelCluster]+",") {
		return nil, nil
	}
	return []corev1.Pod{*f.pod.DeepCopy()}, nil
}

func (f *fakeCluster) InjectEphemeralContainer(_ context.Context, pod *corev1.Pod, ec corev1.EphemeralContainer, dryRun bool) (*corev1.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.injected = append(f.injected, dryRun)
	out := pod.DeepCopy()
	out.Spec.EphemeralContainers = append(out.Spec.EphemeralContainers, ec)
	return out, nil
}

func (f *fakeCluster) WatchTargetPods(context.Context, string, string, string, string) (watch.Interface, error) {
	return f.pods, f.watchErr
}

func (f *fakeCluster) WatchNodeNamed(context.Context, string) (watch.Interface, error) {
	return f.nodes, nil
}

func newFake() *fakeCluster {
	return &fakeCluster{pod: headPod(), pods: watch.NewFakeWithChanSize(10, false), nodes: watch.NewFakeWithChanSize(10, false),
		nodePodsWatch: watch.NewFakeWithChanSize(10, false), events: watch.NewFakeWithChanSize(10, false)}
}

func settings() Settings {
	return Settings{Options: Options{Kind: Disk, Amount: "1Gi", Duration: time.Minute, Suffix: "abcde"},
		Namespace: "ml", Cluster: "raycluster-demo", Role: "head", Timeout: time.Minute,
		Now: func() time.Time { return time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC) }}
}

func TestRunWatchesEvictionAndReplacement(t *testing.T) {
	f := newFake()
	s := settings()
	s.Watch = true
	var progress bytes.Buffer
	s.Progress = &progress
	evicted := headPod()
	evicted.Status.Phase, evicted.Status.Reason, evicted.Status.Message = corev1.PodFailed, "Evicted", "low on disk"
	repl := headPod()
	repl.Name = "raycluster-demo-head-9fz4q"
	f.nodes.Modify(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue}}}})
	f.pods.Modify(evicted)
	f.pods.Add(repl)

	r, outcome, err := Run(context.Background(), f, s)
	if err != nil {
		t.Fatal(err)
	}
	if !outcome.Passed || r.Verdict.Outcome != OutcomeCameBack || r.Eviction.Replacement != repl.Name {
		t.Errorf("outcome %+v verdict %+v eviction %+v", outcome, r.Verdict, r.Eviction)
	}
	if len(f.injected) != 1 || f.injected[0] {
		t.Errorf("injections (dryRun each): %v", f.injected)
	}
	if len(f.selectors) != 1 || f.selectors[0] != "ray.io/cluster=raycluster-demo,ray.io/node-type=head" {
		t.Errorf("lists: %v", f.selectors)
	}
	for _, want := range []string{"injected kubectl-ray-disk-pressure-abcde into pod ml/raycluster-demo-head-x7k2p", "pod raycluster-demo-head-x7k2p evicted: low on disk", "replacement head raycluster-demo-head-9fz4q Running"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
}

func TestRunEvictedHeadNotReplacedFails(t *testing.T) {
	f := newFake()
	s := settings()
	s.Watch, s.Timeout = true, 200*time.Millisecond
	evicted := headPod()
	evicted.Status.Phase, evicted.Status.Reason = corev1.PodFailed, "Evicted"
	f.pods.Modify(evicted)
	r, outcome, err := Run(context.Background(), f, s)
	if err != nil {
		t.Fatal(err)
	}
	if outcome.Passed || r.Verdict.Outcome != OutcomeNotReplaced {
		t.Errorf("outcome %+v verdict %+v", outcome, r.Verdict)
	}
}

func TestRunRefusalsInjectNothing(t *testing.T) {
	declined := errors.New("declined")
	cases := []struct {
		name   string
		change func(*Settings, *fakeCluster)
		kind   fault.Kind
		want   string
	}{
		{"not confirmed", func(s *Settings, _ *fakeCluster) { s.Confirm = func(chaos.Confirmation) error { return declined } }, 0, "declined"},
		{"watch refused", func(s *Settings, f *fakeCluster) { s.Watch, f.watchErr = true, errors.New("forbidden") }, 0, "forbidden"},
		{"no worker", func(s *Settings, _ *fakeCluster) { s.Role = "worker" }, fault.NotFound, `no worker pod of RayCluster "raycluster-demo" in namespace "ml"`},
		{"no such cluster", func(s *Settings, _ *fakeCluster) { s.Cluster = "nope" }, fault.NotFound, `RayCluster "nope" not found in namespace "ml"`},
		{"kube-system", func(s *Settings, _ *fakeCluster) { s.Namespace = "kube-system" }, fault.Invalid, "refusing to put pressure on pods in kube-system"},
		{"role with a pod", func(s *Settings, _ *fakeCluster) { s.Pod, s.RoleSet = "x", true }, fault.Invalid, "role applies to a RAYCLUSTER argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, s := newFake(), settings()
			c.change(&s, f)
			_, _, err := Run(context.Background(), f, s)
			if err == nil || !strings.Contains(err.Error(), c.want) || fault.KindOf(err) != c.kind {
				t.Errorf("err = %v (kind %d), want %q (kind %d)", err, fault.KindOf(err), c.want, c.kind)
			}
			if len(f.injected) != 0 {
				t.Errorf("injected although refused: %v", f.injected)
			}
		})
	}
}

func TestDryRunInjectsOnlyAsADryRun(t *testing.T) {
	f := newFake()
	p, err := DryRun(context.Background(), f, settings())
	if err != nil {
		t.Fatal(err)
	}
	if p.Container.Name != "kubectl-ray-disk-pressure-abcde" || p.Pod.Name != f.pod.Name || len(f.injected) != 1 || !f.injected[0] {
		t.Errorf("container %s pod %s injections %v", p.Container.Name, p.Pod.Name, f.injected)
	}
}

// nodePod is a Running pod of another workload on the target's node.
func nodePod(ns, name string, phase corev1.PodPhase) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{NodeName: "node-a"}, Status: corev1.PodStatus{Phase: phase}}
}

// The plan names the node's other pods (one LIST across namespaces); those already ended and those
// of other nodes are not named.
func TestRunConfirmationNamesTheNodesOtherPods(t *testing.T) {
	f := newFake()
	f.nodePods = []corev1.Pod{nodePod("default", "web-0", corev1.PodRunning), nodePod("ml", "raycluster-demo-worker-a", corev1.PodRunning),
		nodePod("batch", "done", corev1.PodSucceeded)}
	elsewhere := nodePod("default", "far", corev1.PodRunning)
	elsewhere.Spec.NodeName = "node-b"
	f.nodePods = append(f.nodePods, elsewhere)
	s := settings()
	var asked chaos.Confirmation
	s.Confirm = func(q chaos.Confirmation) error { asked = q; return nil }
	if _, _, err := Run(context.Background(), f, s); err != nil {
		t.Fatal(err)
	}
	want := "pod ml/raycluster-demo-head-x7k2p shares node node-a with 2 other pods, which the kubelet may evict first, or as well: default/web-0, ml/raycluster-demo-worker-a"
	if asked.Warning != want || strings.Join(f.nodeScopes, ",") != "list " {
		t.Errorf("warning %q (lists %v), want %q", asked.Warning, f.nodeScopes, want)
	}
	p, err := DryRun(context.Background(), f, settings())
	if err != nil || p.Warning != want {
		t.Errorf("dry run: %v, warning %q", err, p.Warning)
	}
	// Alone on its node: nothing to warn of.
	f = newFake()
	if p, err := DryRun(context.Background(), f, settings()); err != nil || p.Warning != "" {
		t.Errorf("alone: %v, warning %q", err, p.Warning)
	}
}

// Without the right to list pods across namespaces the plan lists the target's namespace and says
// what it cannot see; the run follows that namespace's pods of the node. Without either, it says
// it cannot tell, and follows the target only.
func TestRunNeighboursWithoutClusterWideRBAC(t *testing.T) {
	forbidden := fault.Errorf(fault.Forbidden, `forbidden: you cannot list pods cluster-wide`)
	f := newFake()
	f.nodePods = []corev1.Pod{nodePod("default", "web-0", corev1.PodRunning), nodePod("ml", "raycluster-demo-worker-a", corev1.PodRunning)}
	f.listErr = map[string]error{"": forbidden}
	s := settings()
	s.Watch, s.Timeout = true, 100*time.Millisecond
	var asked chaos.Confirmation
	s.Confirm = func(q chaos.Confirmation) error { asked = q; return nil }
	if _, _, err := Run(context.Background(), f, s); err != nil {
		t.Fatal(err)
	}
	want := "pod ml/raycluster-demo-head-x7k2p shares node node-a with 1 other pod of namespace ml (pods of other namespaces could not be listed: forbidden: you cannot list pods cluster-wide), which the kubelet may evict first, or as well: ml/raycluster-demo-worker-a"
	if asked.Warning != want || strings.Join(f.nodeScopes, ",") != "list ,list ml,watch ml@42" {
		t.Errorf("warning %q scopes %v", asked.Warning, f.nodeScopes)
	}

	f = newFake()
	f.listErr = map[string]error{"": forbidden, "ml": forbidden}
	s.Confirm = func(q chaos.Confirmation) error { asked = q; return nil }
	if _, _, err := Run(context.Background(), f, s); err != nil {
		t.Fatal(err)
	}
	want = "cannot tell which other pods share node node-a (forbidden: you cannot list pods cluster-wide): the kubelet may evict one of them first, and the report will not name it"
	if asked.Warning != want || strings.Join(f.nodeScopes, ",") != "list ,list ml" {
		t.Errorf("warning %q scopes %v", asked.Warning, f.nodeScopes)
	}
}

// The kubelet's Evicted Events are watched across namespaces, else in the target's; when neither
// may be watched, one warning line says what is lost and the run goes on.
func TestRunEventsWatchFallsBack(t *testing.T) {
	forbidden := fault.Errorf(fault.Forbidden, "forbidden: you cannot watch events")
	for _, c := range []struct {
		errs   map[string]error
		scopes string
		warned bool
	}{
		{nil, "", false},
		{map[string]error{"": forbidden}, ",ml", false},
		{map[string]error{"": forbidden, "ml": forbidden}, ",ml", true},
	} {
		f := newFake()
		f.eventsErr = c.errs
		s := settings()
		var warnings bytes.Buffer
		s.Watch, s.Timeout, s.Warn = true, 100*time.Millisecond, &warnings
		if _, _, err := Run(context.Background(), f, s); err != nil {
			t.Fatal(err)
		}
		want := ""
		if c.warned {
			want = "warning: forbidden: you cannot watch events; an eviction the kubelet records only in its Evicted Event (a pod left Succeeded, without a DisruptionTarget condition) will not be recognised\n"
		}
		if strings.Join(f.eventScopes, ",") != c.scopes || warnings.String() != want {
			t.Errorf("errors %v: scopes %q warnings %q", c.errs, f.eventScopes, warnings.String())
		}
	}
}

// A worker left Succeeded by its eviction, the kubelet's Event the only mark: the run recognises
// it at once and ends; a bystander evicted meanwhile is in the report, named as such.
func TestRunSucceededEvictionAndBystander(t *testing.T) {
	f := newFake()
	f.pod.Labels["ray.io/node-type"] = "worker"
	f.pod.UID = "uid-target"
	s := settings()
	s.Role, s.Watch, s.Timeout = "worker", true, time.Minute
	var progress bytes.Buffer
	s.Progress = &progress
	web := nodePod("default", "web-0", corev1.PodFailed)
	web.Status.Reason, web.Status.Message = "Evicted", "The node was low on resource: ephemeral-storage. "
	f.nodePodsWatch.Modify(&web)
	succeeded := f.pod.DeepCopy()
	succeeded.Status.Phase = corev1.PodSucceeded
	f.pods.Modify(succeeded)
	f.events.Add(kubeletEvicted("ml", f.pod.Name, "uid-target", "node-a"))

	start := time.Now()
	r, outcome, err := Run(context.Background(), f, s)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %s: the eviction was not recognised at once", time.Since(start))
	}
	if !outcome.Passed || r.Verdict.Outcome != OutcomeEvicted ||
		r.Verdict.Message != "pod raycluster-demo-head-x7k2p was evicted; bystanders the kubelet evicted on node node-a: default/web-0" {
		t.Errorf("outcome %+v verdict %+v\n%s", outcome, r.Verdict, progress.String())
	}
	var pods []string
	for _, p := range r.Eviction.Pods {
		pods = append(pods, fmt.Sprintf("%s/%s bystander=%v", p.Namespace, p.Pod, p.Bystander))
	}
	if got := strings.Join(pods, "; "); !strings.Contains(got, "ml/raycluster-demo-head-x7k2p bystander=false") || !strings.Contains(got, "default/web-0 bystander=true") || len(pods) != 2 {
		t.Errorf("evicted pods: %s", got)
	}
	if r.Eviction.EvictedMs == nil {
		t.Errorf("no evictedMs: %+v", r.Eviction)
	}
}

// A memory run with --watch-eviction reads its container's log: the ramp line is in the timeline
// and the report, once, whatever the eviction does (here: none within the timeout).
func TestRunMemoryReadsTheRamp(t *testing.T) {
	f := newFake()
	s := settings()
	s.Kind, s.Amount, s.Watch, s.Timeout = Memory, "2Gi", true, 1500*time.Millisecond
	var progress bytes.Buffer
	s.Progress = &progress
	f.log = "kubectl-ray-memory-pressure-abcde: allocating 2147483648 bytes (2 holders of at most 1073741824 bytes each)\n" +
		"kubectl-ray-memory-pressure-abcde: allocated 2147483648 bytes, resident 1.07s after start; holding until 60s after start\n"
	r, _, err := Run(context.Background(), f, s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Ramp == nil || r.Ramp.Bytes != 2<<30 || r.Ramp.ResidentMs != 1070 {
		t.Errorf("ramp %+v", r.Ramp)
	}
	if want := "kubectl-ray-memory-pressure-abcde: 2147483648 bytes resident 1.07s after it started (its log)"; strings.Count(progress.String(), want) != 1 {
		t.Errorf("progress has not once %q:\n%s", want, progress.String())
	}
}

// A disk run reads no log, and a memory run whose log cannot be read has no ramp.
func TestRunRampOnlyFromALog(t *testing.T) {
	for _, kind := range []Kind{Disk, Memory} {
		f := newFake()
		s := settings()
		s.Kind, s.Watch, s.Timeout = kind, true, 700*time.Millisecond
		r, _, err := Run(context.Background(), f, s)
		if err != nil {
			t.Fatal(err)
		}
		if r.Ramp != nil {
			t.Errorf("%s: ramp %+v without a log", kind, r.Ramp)
		}
	}
}
