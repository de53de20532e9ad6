package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/golden"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

func head(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", UID: types.UID("uid-" + name), ResourceVersion: "100", Labels: map[string]string{
			"ray.io/cluster": "demo", "ray.io/node-type": "head", "ray.io/is-ray-node": "yes",
		}},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.9.0",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "ray-head", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		}},
	}
}

type harness struct {
	client *fake.Clientset
	out    *bytes.Buffer
	errOut *bytes.Buffer
	f      *cmdutil.Factory
	writeRecorder
}

func newHarness(t *testing.T, namespace string, objs ...runtime.Object) *harness {
	t.Helper()
	newSuffix = func() string { return "abcde" }
	h := &harness{client: fake.NewClientset(objs...)}
	// The fake tracker ignores dry-run; the API server stores nothing for it, so neither does this.
	h.client.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchActionImpl)
		if len(pa.PatchOptions.DryRun) == 0 {
			return false, nil, nil
		}
		obj, err := h.client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), pa.Namespace, pa.Name)
		return true, obj, err
	})
	h.record(h.client)
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "ml"}}
	h.f, h.out, h.errOut = testFactory(namespace, &kube.Clients{Kube: h.client, Ray: rayfake.NewSimpleClientset(rc)})
	return h
}

func (h *harness) run(t *testing.T, newCmd func(*cmdutil.Factory) *cobra.Command, args ...string) error {
	t.Helper()
	return execute(h.f, h.out, h.errOut, newCmd, args...)
}

func (h *harness) patches() []k8stesting.PatchActionImpl {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []k8stesting.PatchActionImpl
	for _, a := range h.writes {
		if p, ok := a.(k8stesting.PatchActionImpl); ok {
			out = append(out, p)
		}
	}
	return out
}

func (h *harness) storedEphemeral(t *testing.T, name string) []corev1.EphemeralContainer {
	t.Helper()
	p, err := h.client.CoreV1().Pods("ml").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Spec.EphemeralContainers
}

// TestDryRunJSON: -o json prints the same container as JSON; -o junit is refused before any call.
func TestDryRunJSON(t *testing.T) {
	h := newHarness(t, "ml", head("demo-head-x7k2p"))
	if err := h.run(t, full(NewDiskPressureCmd), "pod/demo-head-x7k2p", "--size", "10Gi", "--dry-run", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var ec corev1.EphemeralContainer
	if err := json.Unmarshal(h.out.Bytes(), &ec); err != nil || ec.Name != "kubectl-ray-disk-pressure-abcde" || ec.TargetContainerName != "ray-head" {
		t.Fatalf("stdout is not the container as JSON (%v): %s", err, h.out.String())
	}
	h = newHarness(t, "ml", head("demo-head-x7k2p"))
	err := h.run(t, full(NewDiskPressureCmd), "pod/demo-head-x7k2p", "--size", "10Gi", "--dry-run", "-o", "junit")
	if exit.CodeOf(err) != exit.Usage || err.Error() != "--dry-run prints the ephemeral container, which has no result for JUnit: use -o text (YAML) or -o json" || len(h.client.Actions()) != 0 {
		t.Fatalf("dry run -o junit: exit %d %v, %d API calls", exit.CodeOf(err), err, len(h.client.Actions()))
	}
}

func TestDryRunPrintsExactContainerAndAddsNothing(t *testing.T) {
	h := newHarness(t, "ml", head("demo-head-x7k2p"))
	if err := h.run(t, full(NewDiskPressureCmd), "pod/demo-head-x7k2p", "--size", "10Gi", "--dry-run"); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, filepath.Join("testdata", "dry-run-disk.yaml"), []byte(h.out.String()))
	if got := h.errOut.String(); got != "dry run: the API server accepted kubectl-ray-disk-pressure-abcde for pod ml/demo-head-x7k2p; nothing was injected\n" {
		t.Errorf("stderr: %q", got)
	}
	ps := h.patches()
	if len(ps) != 1 || len(ps[0].PatchOptions.DryRun) != 1 || ps[0].PatchOptions.DryRun[0] != "All" || ps[0].Subresource != "ephemeralcontainers" {
		t.Fatalf("want one server-side dry-run patch of pods/ephemeralcontainers, got %+v", ps)
	}
	if ec := h.storedEphemeral(t, "demo-head-x7k2p"); len(ec) != 0 {
		t.Errorf("dry run stored ephemeral containers: %+v", ec)
	}
}

func TestInjectSendsExactPatch(t *testing.T) {
	h := newHarness(t, "ml", head("demo-head-x7k2p"))
	if err := h.run(t, full(NewMemoryPressureCmd), "demo", "--percent", "50", "--duration", "30s", "--yes"); err != nil {
		t.Fatalf("%v\n%s", err, h.errOut)
	}
	ps := h.patches()
	if len(ps) != 1 {
		t.Fatalf("want one patch, got %d", len(ps))
	}
	p := ps[0]
	if p.Subresource != "ephemeralcontainers" || string(p.PatchType) != "application/strategic-merge-patch+json" || len(p.PatchOptions.DryRun) != 0 || p.Name != "demo-head-x7k2p" {
		t.Errorf("patch: subresource %q type %q dryRun %v name %q", p.Subresource, p.PatchType, p.PatchOptions.DryRun, p.Name)
	}
	golden.Assert(t, filepath.Join("testdata", "patch-memory.json"), []byte(string(p.Patch)+"\n"))
	want := "injected kubectl-ray-memory-pressure-abcde into pod ml/demo-head-x7k2p (target container ray-head, memory: 50% of container ray-head's memory limit 4Gi, for 30s); its log: kubectl logs -n ml demo-head-x7k2p -c kubectl-ray-memory-pressure-abcde\n"
	if h.out.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", h.out, want)
	}
	ec := h.storedEphemeral(t, "demo-head-x7k2p")
	if len(ec) != 1 || ec[0].Name != "kubectl-ray-memory-pressure-abcde" || ec[0].TargetContainerName != "ray-head" {
		t.Errorf("stored: %+v", ec)
	}
	// The RayCluster target cost exactly one LIST, with the cluster's head selector; the node's
	// other pods one more, across namespaces, selected by field.
	var lists []string
	for _, a := range h.client.Actions() {
		if la, ok := a.(k8stesting.ListActionImpl); ok {
			lists = append(lists, fmt.Sprintf("%s %q labels %q fields %q", la.GetResource().Resource, la.GetNamespace(),
				la.GetListRestrictions().Labels.String(), la.GetListRestrictions().Fields.String()))
		}
	}
	if want := []string{`pods "ml" labels "ray.io/cluster=demo,ray.io/node-type=head" fields ""`, `pods "" labels "" fields "spec.nodeName=node-a"`}; strings.Join(lists, "\n") != strings.Join(want, "\n") {
		t.Errorf("lists:\n%s\nwant:\n%s", strings.Join(lists, "\n"), strings.Join(want, "\n"))
	}
}

func TestRefusalsInjectNothing(t *testing.T) {
	notRay := head("web-0")
	delete(notRay.Labels, "ray.io/is-ray-node")
	pending := head("demo-head-pend1")
	pending.Status.Phase = corev1.PodPending
	cases := []struct {
		name string
		ns   string
		cmd  func(*cmdutil.Factory) *cobra.Command
		args []string
		code int
		want string
	}{
		{"no --yes without a terminal", "ml", full(NewDiskPressureCmd), []string{"pod/demo-head-x7k2p", "--size", "1Gi"}, exit.NotConfirmed,
			"refusing to add ephemeral container kubectl-ray-disk-pressure-abcde to pod ml/demo-head-x7k2p on node node-a (node disk: 1Gi, for 2m0s) without --yes; ephemeral containers cannot be removed (it stays in the pod spec until the pod is deleted); pass --yes, or run in a terminal to confirm"},
		{"not a Ray pod", "ml", full(NewDiskPressureCmd), []string{"pod/web-0", "--size", "1Gi", "--yes"}, exit.Usage,
			"refusing pod ml/web-0: it is not a Ray pod (no label ray.io/is-ray-node=yes); chaos targets Ray pods only"},
		{"kube-system", "kube-system", full(NewDiskPressureCmd), []string{"pod/demo-head-x7k2p", "--size", "1Gi", "--yes"}, exit.Usage,
			"refusing to put pressure on pods in kube-system: it is never a chaos target"},
		{"pod not running", "ml", full(NewMemoryPressureCmd), []string{"pod/demo-head-pend1", "--bytes", "1Gi", "--yes"}, exit.Usage,
			"pod ml/demo-head-pend1 is Pending, not Running; an ephemeral container can only join a running pod"},
		{"container not found", "ml", full(NewMemoryPressureCmd), []string{"pod/demo-head-x7k2p", "--bytes", "1Gi", "--target-container", "sidecar", "--yes"}, exit.NotFound,
			`container "sidecar" not found in pod ml/demo-head-x7k2p; it has: ray-head (pass one with --target-container)`},
		{"malformed size", "ml", full(NewDiskPressureCmd), []string{"demo", "--size", "lots", "--yes"}, exit.Usage,
			`--size "lots" is not a quantity: use e.g. 512Mi, 10Gi or 2G`},
		{"percent zero", "ml", full(NewMemoryPressureCmd), []string{"demo", "--percent", "0", "--yes"}, exit.Usage,
			"--percent 0 is out of range: use 1 to 100"},
		{"no amount", "ml", full(NewDiskPressureCmd), []string{"demo", "--yes"}, exit.Usage,
			"say how much: pass --size (e.g. 10Gi) or --percent (1-100)"},
		{"size and percent", "ml", full(NewDiskPressureCmd), []string{"demo", "--size", "1Gi", "--percent", "5", "--yes"}, exit.Usage,
			"say how much: pass --size (e.g. 10Gi) or --percent (1-100), not both"},
		{"percent out of range", "ml", full(NewMemoryPressureCmd), []string{"demo", "--percent", "101", "--yes"}, exit.Usage,
			"--percent 101 is out of range: use 1 to 100"},
		{"role with a pod", "ml", full(NewDiskPressureCmd), []string{"pod/demo-head-x7k2p", "--role", "worker", "--size", "1Gi"}, exit.Usage,
			"--role applies to a RAYCLUSTER argument, not to pod/demo-head-x7k2p"},
		{"no such cluster", "ml", full(NewDiskPressureCmd), []string{"nope", "--size", "1Gi", "--yes"}, exit.NotFound,
			`RayCluster "nope" not found in namespace "ml"; list them with: kubectl get rayclusters -n ml`},
		{"no worker", "ml", full(NewDiskPressureCmd), []string{"demo", "--role", "worker", "--size", "1Gi", "--yes"}, exit.NotFound,
			`no worker pod of RayCluster "demo" in namespace "ml"; list them with: kubectl get pods -n ml -l ray.io/cluster=demo,ray.io/node-type=worker`},
		{"no such pod", "ml", full(NewDiskPressureCmd), []string{"pod/gone", "--size", "1Gi", "--yes"}, exit.NotFound,
			`Pod "gone" not found in namespace "ml"; list them with: kubectl get pods -n ml`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, c.ns, head("demo-head-x7k2p"), notRay, pending)
			err := h.run(t, c.cmd, c.args...)
			if err == nil || err.Error() != c.want || exit.CodeOf(err) != c.code {
				t.Errorf("got %v (exit %d)\nwant %s (exit %d)", err, exit.CodeOf(err), c.want, c.code)
			}
			if len(h.writes) != 0 {
				t.Errorf("refused, yet wrote: %v", h.writes)
			}
		})
	}
}

func TestPatchErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		code int
		want string
	}{
		{"subresource missing", apierrors.NewNotFound(schema.GroupResource{Resource: "pods/ephemeralcontainers"}, ""), exit.API,
			"ephemeral containers are not supported by this cluster (no pods/ephemeralcontainers subresource; Kubernetes 1.25+ serves it): nothing was injected"},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "demo-head-x7k2p", nil), exit.Forbidden,
			`forbidden: you cannot patch pods/ephemeralcontainers in namespace "ml"; ask for RBAC verb "patch" on "pods/ephemeralcontainers" (check with: kubectl auth can-i patch pods/ephemeralcontainers -n ml)`},
	}
	for _, c := range cases {
		for _, mode := range []string{"--yes", "--dry-run"} {
			t.Run(c.name+" "+mode, func(t *testing.T) {
				h := newHarness(t, "ml", head("demo-head-x7k2p"))
				h.client.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, c.err })
				err := h.run(t, full(NewDiskPressureCmd), "pod/demo-head-x7k2p", "--size", "1Gi", mode)
				if err == nil || err.Error() != c.want || exit.CodeOf(err) != c.code {
					t.Errorf("got %v (exit %d)\nwant %s (exit %d)", err, exit.CodeOf(err), c.want, c.code)
				}
				// A refused dry run prints no container: stdout holds only what the server accepted.
				if h.out.Len() != 0 {
					t.Errorf("stdout after a refusal: %q", h.out.String())
				}
				if ec := h.storedEphemeral(t, "demo-head-x7k2p"); len(ec) != 0 {
					t.Errorf("stored: %+v", ec)
				}
			})
		}
	}
}

// --watch-eviction without the right to watch pods is refused before anything is injected: exit 4
// promises nothing was.
func TestWatchEvictionWithoutWatchRBACInjectsNothing(t *testing.T) {
	h := newHarness(t, "ml", head("demo-head-x7k2p"))
	h.client.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
	})
	err := h.run(t, full(NewDiskPressureCmd), "demo", "--size", "1Gi", "--watch-eviction", "--yes")
	if exit.CodeOf(err) != exit.Forbidden || !strings.Contains(err.Error(), "you cannot watch pods") {
		t.Fatalf("err = %v (exit %d), want exit 4 naming watch pods", err, exit.CodeOf(err))
	}
	if p := h.patches(); len(p) != 0 {
		t.Fatalf("%d patches sent: injected although the watch was refused", len(p))
	}
}

// TestWatchEvictionTimeline plays the kubelet and the operator through the fake API: the node
// reports DiskPressure, the head goes Failed/Evicted, a new head appears and runs.
func TestWatchEvictionTimeline(t *testing.T) {
	h := newHarness(t, "ml", head("demo-head-x7k2p"), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}})
	watching := make(chan string, 8)
	h.client.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		watching <- a.GetResource().Resource
		return false, nil, nil
	})
	var tick time.Duration
	var clock sync.Mutex
	h.f.Now = func() time.Time {
		clock.Lock()
		defer clock.Unlock()
		return time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC).Add(tick)
	}
	advance := func(d time.Duration) { clock.Lock(); tick += d; clock.Unlock() }
	done := make(chan error, 1)
	go func() {
		done <- h.run(t, full(NewDiskPressureCmd), "demo", "--size", "1Gi", "--yes", "--watch-eviction", "--timeout", "20s")
	}()
	// The target's pods, its node, the node's pods and the kubelet's Evicted Events.
	for i := 0; i < 4; i++ {
		select {
		case <-watching:
		case <-time.After(5 * time.Second):
			t.Fatal("the command did not start its watches")
		}
	}
	// The watches open before the injection, and the timeline's zero is read after it.
	for deadline := time.Now().Add(5 * time.Second); len(h.patches()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the command did not inject")
		}
	}
	time.Sleep(100 * time.Millisecond)
	ctx := context.Background()
	pods, nodes := h.client.CoreV1().Pods("ml"), h.client.CoreV1().Nodes()
	advance(20 * time.Second)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue}}}}
	if _, err := nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	advance(10 * time.Second)
	evicted, _ := pods.Get(ctx, "demo-head-x7k2p", metav1.GetOptions{})
	evicted.Status.Phase, evicted.Status.Reason, evicted.Status.Message = corev1.PodFailed, "Evicted", "The node was low on resource: ephemeral-storage."
	if _, err := pods.UpdateStatus(ctx, evicted, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	advance(15 * time.Second)
	if _, err := pods.Create(ctx, head("demo-head-9fz4q"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v\n%s", err, h.errOut)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not end after the replacement ran")
	}
	golden.Assert(t, filepath.Join("testdata", "watch-eviction.txt"), []byte(h.out.String()))
}

// With -o json the injection line goes to stderr and stdout holds the document only.
func TestInjectJSONReport(t *testing.T) {
	h := newHarness(t, "ml", head("demo-head-x7k2p"))
	if err := h.run(t, full(NewDiskPressureCmd), "demo", "--size", "1Gi", "--yes", "-o", "json"); err != nil {
		t.Fatalf("%v\n%s", err, h.errOut)
	}
	var doc struct {
		Kind     string
		Settings struct{ Pod, Container string }
		Verdict  struct {
			Passed  bool
			Outcome string
		}
	}
	if err := json.Unmarshal(h.out.Bytes(), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, h.out)
	}
	if doc.Kind != "PressureReport" || doc.Settings.Pod != "demo-head-x7k2p" || doc.Settings.Container != "kubectl-ray-disk-pressure-abcde" ||
		!doc.Verdict.Passed || doc.Verdict.Outcome != "not-watched" {
		t.Errorf("report: %+v", doc)
	}
	if !strings.HasPrefix(h.errOut.String(), "injected kubectl-ray-disk-pressure-abcde into pod ml/demo-head-x7k2p") {
		t.Errorf("stderr: %q", h.errOut)
	}
}

// TestPlanWarnsOfTheNodesOtherPods: node pressure is the node's, so the plan names the other pods
// of the target's node (one LIST across namespaces): after the dry run's line, in the prompt, and
// as a line of the run once injected (with --yes too); a refusal stays its one error line.
func TestPlanWarnsOfTheNodesOtherPods(t *testing.T) {
	onNode := func(ns, name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	objs := func() []runtime.Object {
		return []runtime.Object{head("demo-head-x7k2p"), onNode("ml", "demo-worker-1", "node-a"), onNode("default", "web-0", "node-a"), onNode("default", "far", "node-b")}
	}
	warning := "pod ml/demo-head-x7k2p shares node node-a with 2 other pods, which the kubelet may evict first, or as well: default/web-0, ml/demo-worker-1"

	h := newHarness(t, "ml", objs()...)
	if err := h.run(t, full(NewDiskPressureCmd), "demo", "--size", "1Gi", "--dry-run"); err != nil {
		t.Fatal(err)
	}
	if want := "dry run: the API server accepted kubectl-ray-disk-pressure-abcde for pod ml/demo-head-x7k2p; nothing was injected\nwarning: " + warning + "\n"; h.errOut.String() != want {
		t.Errorf("dry run stderr:\n%s\nwant:\n%s", h.errOut, want)
	}

	h = newHarness(t, "ml", objs()...)
	if err := h.run(t, full(NewDiskPressureCmd), "demo", "--size", "1Gi", "--yes", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h.errOut.String(), "warning: "+warning+"\ninjected ") || !json.Valid(h.out.Bytes()) || len(h.patches()) != 1 {
		t.Errorf("--yes: stderr %q, stdout %q", h.errOut, h.out)
	}

	h = newHarness(t, "ml", objs()...)
	h.f.StdinTerminal = func() bool { return true }
	h.f.IOStreams.In.(*bytes.Buffer).WriteString("y\n")
	if err := h.run(t, full(NewDiskPressureCmd), "demo", "--size", "1Gi"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.errOut.String(), ".\nWarning: "+warning+"\nEphemeral containers cannot be removed") || !strings.HasSuffix(h.errOut.String(), "Continue? [y/N] warning: "+warning+"\n") {
		t.Errorf("prompt: %q", h.errOut)
	}

	// The patch refused: one error line, no warning.
	h = newHarness(t, "ml", objs()...)
	h.client.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "demo-head-x7k2p", nil)
	})
	if err := h.run(t, full(NewDiskPressureCmd), "demo", "--size", "1Gi", "--yes"); exit.CodeOf(err) != exit.Forbidden || h.errOut.Len() != 0 {
		t.Errorf("refused patch: %v, stderr %q", err, h.errOut)
	}

	h = newHarness(t, "ml", objs()...)
	err := h.run(t, full(NewDiskPressureCmd), "demo", "--size", "1Gi")
	if exit.CodeOf(err) != exit.NotConfirmed || h.errOut.Len() != 0 || len(h.patches()) != 0 {
		t.Errorf("refusal: %v (exit %d), stderr %q, %d patches", err, exit.CodeOf(err), h.errOut, len(h.patches()))
	}
}

// TestWatchEvictionSucceededByEvent plays a real kubelet's eviction of a pod whose containers exit
// 0 on SIGTERM: the pod ends Succeeded with no Evicted reason and no DisruptionTarget condition,
// and the kubelet's Evicted Event is the only mark. The run recognises it at once (exit 0, "was
// evicted"), instead of waiting out --timeout for "no eviction".
func TestWatchEvictionSucceededByEvent(t *testing.T) {
	worker := head("demo-worker-abcde")
	worker.Labels["ray.io/node-type"] = "worker"
	h := newHarness(t, "ml", worker)
	watching := make(chan string, 8)
	h.client.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		watching <- a.GetResource().Resource
		return false, nil, nil
	})
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- h.run(t, full(NewDiskPressureCmd), "pod/demo-worker-abcde", "--size", "1Gi", "--yes", "--watch-eviction", "--timeout", "60s")
	}()
	for i := 0; i < 4; i++ {
		select {
		case <-watching:
		case <-time.After(5 * time.Second):
			t.Fatal("the command did not start its watches")
		}
	}
	ctx := context.Background()
	pods := h.client.CoreV1().Pods("ml")
	p, _ := pods.Get(ctx, worker.Name, metav1.GetOptions{})
	p.Status.Phase = corev1.PodSucceeded
	if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: worker.Name + ".evicted"}, Reason: "Evicted", Type: corev1.EventTypeWarning,
		Message:        "The node was low on resource: ephemeral-storage. Threshold quantity: 300Mi, available: 152060Ki. ",
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ml", Name: worker.Name, UID: worker.UID, APIVersion: "v1"},
		Source:         corev1.EventSource{Component: "kubelet", Host: "node-a"}}
	if _, err := h.client.CoreV1().Events("ml").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v\n%s", err, h.errOut)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the watch did not end at the eviction")
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("took %s", took)
	}
	out := h.out.String()
	if !strings.Contains(out, "pod demo-worker-abcde evicted: The node was low on resource: ephemeral-storage.") ||
		!strings.HasSuffix(out, "\npod demo-worker-abcde was evicted\n") {
		t.Errorf("stdout:\n%s", out)
	}
}
