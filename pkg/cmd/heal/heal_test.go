package heal

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

var (
	t0      = time.Date(2024, 5, 8, 7, 55, 30, 0, time.UTC)
	podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

func rayCluster(name string) *rayv1.RayCluster {
	return &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))}}
}

func headPod(c *rayv1.RayCluster, name string) *corev1.Pod {
	yes := true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: c.Namespace, Name: name, UID: types.UID("uid-" + name), ResourceVersion: "100",
			CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour)),
			Labels: map[string]string{ray.LabelCluster: c.Name, ray.LabelNodeType: ray.NodeTypeHead,
				ray.LabelIsRayNode: "yes"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: c.Name, UID: c.UID, Controller: &yes}},
		},
		Spec: corev1.PodSpec{NodeName: "node-a", RestartPolicy: corev1.RestartPolicyAlways},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

func evictedPod(c *rayv1.RayCluster, name string) *corev1.Pod {
	p := headPod(c, name)
	p.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted",
		Message: "The node was low on resource: memory. Threshold quantity: 1Gi, available: 991045Ki. "}
	return p
}

type env struct {
	kc     *fake.Clientset
	rc     *rayfake.Clientset
	out    *bytes.Buffer
	errOut *bytes.Buffer
	f      *cmdutil.Factory
}

func newEnv(cluster *rayv1.RayCluster, pods ...runtime.Object) *env {
	e := &env{kc: fake.NewClientset(pods...), rc: rayfake.NewSimpleClientset(cluster)}
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	e.out, e.errOut = out, errOut
	flags := genericclioptions.NewConfigFlags(true)
	ns := "default"
	flags.Namespace = &ns
	e.f = cmdutil.NewFactory(flags, streams)
	e.f.Now = func() time.Time { return t0 }
	clients := &kube.Clients{Kube: e.kc, Ray: e.rc}
	e.f.NewClients = func(*genericclioptions.ConfigFlags) (*kube.Clients, error) { return clients, nil }
	return e
}

// run runs heal with args. Unless they say where evidence goes, it keeps none: a test must not
// write into the working directory, and TestYesKeepsTheEvidence holds what is kept.
func (e *env) run(ctx context.Context, args ...string) error {
	if !slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "evidence") }) {
		args = append(args, "--no-evidence")
	}
	cmd := NewCmd(e.f, nil)
	cmd.SetArgs(args)
	cmd.SetOut(e.out)
	cmd.SetErr(e.errOut)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return cmd.ExecuteContext(ctx)
}

func (e *env) deletes() []k8stesting.DeleteActionImpl {
	var out []k8stesting.DeleteActionImpl
	for _, a := range e.kc.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			out = append(out, d)
		}
	}
	return out
}

const seedPlan = "Plan: 1 delete\n" +
	"  delete pod default/raycluster-kuberay-head-ldg9f of RayCluster raycluster-kuberay (head-evicted)\n" +
	"    phase Failed (Evicted): The node was low on resource: memory\n"

func seedEnv() (*env, *corev1.Pod) {
	c := rayCluster("raycluster-kuberay")
	p := evictedPod(c, "raycluster-kuberay-head-ldg9f")
	return newEnv(c, p), p
}

func TestRefusesWithoutATerminal(t *testing.T) {
	e, p := seedEnv()
	err := e.run(context.Background())
	if exit.CodeOf(err) != exit.NotConfirmed ||
		err.Error() != "refusing to delete without confirmation: stdin is not a terminal; pass --yes to heal without asking" {
		t.Fatalf("err = %v (code %d)", err, exit.CodeOf(err))
	}
	if e.out.String() != seedPlan {
		t.Errorf("stdout:\n%s\nwant:\n%s", e.out, seedPlan)
	}
	if len(e.deletes()) != 0 {
		t.Errorf("deleted without confirmation")
	}
	if _, err := e.kc.Tracker().Get(podsGVR, p.Namespace, p.Name); err != nil {
		t.Errorf("pod gone: %v", err)
	}
}

// atTerminal plays a person at a terminal who answers answer to the prompt.
func (e *env) atTerminal(answer string) {
	e.f.StdinTerminal = func() bool { return true }
	e.f.IOStreams.In = strings.NewReader(answer)
}

// At a terminal the plan is shown before the question, and "n" deletes nothing.
func TestTerminalConfirmation(t *testing.T) {
	for _, tc := range []struct {
		answer  string
		deletes int
	}{{"n\n", 0}, {"\n", 0}, {"y\n", 1}, {"yes\n", 1}} {
		e, _ := seedEnv()
		e.atTerminal(tc.answer)
		err := e.run(context.Background(), "--wait=false")
		if got := len(e.deletes()); got != tc.deletes {
			t.Errorf("answer %q: %d deletes, want %d", tc.answer, got, tc.deletes)
		}
		if tc.deletes == 0 && (exit.CodeOf(err) != exit.NotConfirmed || err.Error() != "not confirmed; nothing was deleted") {
			t.Errorf("answer %q: err = %v", tc.answer, err)
		}
		if tc.deletes == 1 && (err != nil || !strings.Contains(e.out.String(), "deleted pod default/raycluster-kuberay-head-ldg9f (rule head-evicted)")) {
			t.Errorf("answer %q: err = %v, stdout %q: want the delete done and reported", tc.answer, err, e.out)
		}
		if !strings.HasPrefix(e.out.String(), seedPlan) || e.errOut.String() != "Delete 1 head pod? [y/N]: " {
			t.Errorf("answer %q: stdout %q, stderr %q: the plan must come before the question", tc.answer, e.out, e.errOut)
		}
	}
}

// With -o json the document comes after the deletes, so at a terminal the plan is shown on stderr
// before the question: nobody is asked to confirm deletes they cannot see.
func TestTerminalConfirmationWithJSONShowsThePlanFirst(t *testing.T) {
	e, _ := seedEnv()
	e.atTerminal("n\n")
	err := e.run(context.Background(), "-o", "json")
	if exit.CodeOf(err) != exit.NotConfirmed || len(e.deletes()) != 0 {
		t.Fatalf("err = %v, deletes %d", err, len(e.deletes()))
	}
	if want := seedPlan + "Delete 1 head pod? [y/N]: "; e.errOut.String() != want {
		t.Errorf("stderr:\n%q\nwant:\n%q", e.errOut, want)
	}
	if !strings.HasPrefix(e.out.String(), "{") {
		t.Errorf("stdout is not the JSON document: %q", e.out)
	}
}

func TestYesDeletesAndRecordsEvents(t *testing.T) {
	e, p := seedEnv()
	if err := e.run(context.Background(), "--yes", "--wait=false"); err != nil {
		t.Fatal(err)
	}
	want := seedPlan +
		"deleted pod default/raycluster-kuberay-head-ldg9f (rule head-evicted)\n" +
		"  recorded Event RayHeadHealed on RayCluster default/raycluster-kuberay and on the pod\n"
	if e.out.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", e.out, want)
	}
	d := e.deletes()
	if len(d) != 1 || *d[0].DeleteOptions.Preconditions.UID != p.UID || *d[0].DeleteOptions.Preconditions.ResourceVersion != "100" {
		t.Fatalf("deletes: %+v", d)
	}
	evs, _ := e.kc.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if len(evs.Items) != 2 {
		t.Errorf("events: %d", len(evs.Items))
	}
}

// Before the delete, heal keeps the pod's YAML, Events and logs under --evidence-dir, and says
// where; the pod's secret env value is in none of it.
func TestYesKeepsTheEvidence(t *testing.T) {
	e, p := seedEnv()
	dir := t.TempDir()
	if err := e.run(context.Background(), "--yes", "--wait=false", "--evidence-dir", dir); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(dir, "default", "raycluster-kuberay-head-ldg9f-uid-rayc")
	want := seedPlan +
		"deleted pod default/raycluster-kuberay-head-ldg9f (rule head-evicted)\n" +
		"  kept its evidence (YAML, Events, logs) in " + kept + "\n" +
		"  recorded Event RayHeadHealed on RayCluster default/raycluster-kuberay and on the pod\n"
	if e.out.String() != want || e.errOut.String() != "" {
		t.Errorf("stdout:\n%s\nwant:\n%s\nstderr: %s", e.out, want, e.errOut)
	}
	b, err := os.ReadFile(filepath.Join(kept, "pod.yaml"))
	if err != nil || !strings.Contains(string(b), "uid: "+string(p.UID)) || !strings.Contains(string(b), "Evicted") {
		t.Errorf("pod.yaml (%v):\n%s", err, b)
	}
	if len(e.deletes()) != 1 {
		t.Errorf("deletes: %d", len(e.deletes()))
	}
}

// Evidence that cannot be kept is one warning; the heal goes ahead.
func TestYesHealsWhenTheEvidenceCannotBeKept(t *testing.T) {
	e, _ := seedEnv()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.run(context.Background(), "--yes", "--wait=false", "--evidence-dir", file); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.errOut.String(), "warning: evidence of pod default/raycluster-kuberay-head-ldg9f not kept: cannot create evidence directory") ||
		!strings.HasSuffix(e.errOut.String(), "; healing anyway\n") || len(e.deletes()) != 1 {
		t.Errorf("stderr %q, deletes %d: want one warning and the delete", e.errOut, len(e.deletes()))
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	e, _ := seedEnv()
	if err := e.run(context.Background(), "--dry-run"); err != nil {
		t.Fatal(err)
	}
	want := seedPlan + "would delete pod default/raycluster-kuberay-head-ldg9f (rule head-evicted); server-side dry run accepted, nothing changed\n"
	if e.out.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", e.out, want)
	}
	d := e.deletes()
	if len(d) != 1 || len(d[0].DeleteOptions.DryRun) != 1 {
		t.Fatalf("deletes: %+v", d)
	}
}

func TestNothingToHeal(t *testing.T) {
	c := rayCluster("rc")
	e := newEnv(c, headPod(c, "rc-head-a"))
	if err := e.run(context.Background(), "rc"); err != nil {
		t.Fatal(err)
	}
	if got := e.out.String(); got != "Nothing to heal for RayCluster default/rc.\n" {
		t.Errorf("stdout: %q", got)
	}
}

func TestJSON(t *testing.T) {
	c := rayCluster("rc")
	e := newEnv(c, headPod(c, "rc-head-a"))
	if err := e.run(context.Background(), "-o", "json"); err != nil {
		t.Fatal(err)
	}
	if got := e.out.String(); got != "{\n  \"apiVersion\": \"kubectl-ray.io/v1alpha1\",\n  \"kind\": \"HealReport\",\n  \"plan\": {\n    \"actions\": [],\n    \"notHealable\": []\n  }\n}\n" {
		t.Errorf("stdout: %q", got)
	}
}

// What heal refuses once it has read the cluster (flags_test.go has what it refuses before).
func TestBadInput(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--force"}, exit.Usage,
			"--force only force-deletes heads stuck Terminating on a down node, and doctor finds none in namespace default; run without --force"},
		{[]string{"nope"}, exit.NotFound,
			`RayCluster "nope" not found in namespace "default"; list them with: kubectl get rayclusters -n default`},
		{[]string{"raycluster.ray.io/nope"}, exit.NotFound,
			`RayCluster "nope" not found in namespace "default"; list them with: kubectl get rayclusters -n default`},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			c := rayCluster("rc")
			e := newEnv(c, headPod(c, "rc-head-a"))
			err := e.run(context.Background(), tc.args...)
			if exit.CodeOf(err) != tc.code || err.Error() != tc.msg {
				t.Fatalf("err = %v (code %d), want %q (code %d)", err, exit.CodeOf(err), tc.msg, tc.code)
			}
		})
	}
}

func TestUnknownLeaseNamespace(t *testing.T) {
	c := rayCluster("rc")
	e := newEnv(c)
	e.kc.PrependReactor("create", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, a.GetNamespace())
	})
	err := e.run(context.Background(), "--watch", "--yes", "--leader-elect", "--lease-namespace", "nope")
	if exit.CodeOf(err) != exit.Usage ||
		exit.Message(err) != `lease namespace "nope" does not exist; pass --lease-namespace with an existing namespace (the one the watchdog runs in)` {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(e.out.String(), "watching") {
		t.Errorf("started anyway: %s", e.out)
	}
}

// A metrics address that cannot be bound fails the watchdog before it watches anything, in one
// line that names the flag (pkg/watchdog names the setting; the command shows it).
func TestMetricsAddressInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := rayCluster("rc")
	e := newEnv(c)
	err = e.run(context.Background(), "--watch", "--yes", "--metrics-bind-address", l.Addr().String())
	if exit.CodeOf(err) != exit.Usage || !strings.HasSuffix(exit.Message(err), "; pass --metrics-bind-address with a free host:port") {
		t.Fatalf("err = %q (code %d)", exit.Message(err), exit.CodeOf(err))
	}
	if strings.Contains(e.out.String(), "watching") {
		t.Errorf("started anyway: %s", e.out)
	}
}
