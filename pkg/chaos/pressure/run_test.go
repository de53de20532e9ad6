package pressure

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/report"
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
	return &fakeCluster{pod: headPod(), pods: watch.NewFakeWithChanSize(10, false), nodes: watch.NewFakeWithChanSize(10, false)}
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
	if !outcome.Passed || r.Verdict.Outcome != report.OutcomeCameBack || r.Eviction.Replacement != repl.Name {
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
	if outcome.Passed || r.Verdict.Outcome != report.OutcomeNotReplaced {
		t.Errorf("outcome %+v verdict %+v", outcome, r.Verdict)
	}
}

func TestRunRefusalsInjectNothing(t *testing.T) {
	declined := errors.New("declined")
	cases := []struct {
		name   string
		change func(*Settings, *fakeCluster)
		kind   chaos.ErrorKind
		want   string
	}{
		{"not confirmed", func(s *Settings, _ *fakeCluster) { s.Confirm = func(chaos.Confirmation) error { return declined } }, 0, "declined"},
		{"watch refused", func(s *Settings, f *fakeCluster) { s.Watch, f.watchErr = true, errors.New("forbidden") }, 0, "forbidden"},
		{"no worker", func(s *Settings, _ *fakeCluster) { s.Role = "worker" }, chaos.NotFound, `no worker pod of RayCluster "raycluster-demo" in namespace "ml"`},
		{"no such cluster", func(s *Settings, _ *fakeCluster) { s.Cluster = "nope" }, chaos.NotFound, `RayCluster "nope" not found in namespace "ml"`},
		{"kube-system", func(s *Settings, _ *fakeCluster) { s.Namespace = "kube-system" }, chaos.Invalid, "refusing to put pressure on pods in kube-system"},
		{"role with a pod", func(s *Settings, _ *fakeCluster) { s.Pod, s.RoleSet = "x", true }, chaos.Invalid, "role applies to a RAYCLUSTER argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, s := newFake(), settings()
			c.change(&s, f)
			_, _, err := Run(context.Background(), f, s)
			if err == nil || !strings.Contains(err.Error(), c.want) || chaos.KindOf(err) != c.kind {
				t.Errorf("err = %v (kind %d), want %q (kind %d)", err, chaos.KindOf(err), c.want, c.kind)
			}
			if len(f.injected) != 0 {
				t.Errorf("injected although refused: %v", f.injected)
			}
		})
	}
}

func TestDryRunInjectsOnlyAsADryRun(t *testing.T) {
	f := newFake()
	ec, pod, err := DryRun(context.Background(), f, settings())
	if err != nil {
		t.Fatal(err)
	}
	if ec.Name != "kubectl-ray-disk-pressure-abcde" || pod.Name != f.pod.Name || len(f.injected) != 1 || !f.injected[0] {
		t.Errorf("container %s pod %s injections %v", ec.Name, pod.Name, f.injected)
	}
}
