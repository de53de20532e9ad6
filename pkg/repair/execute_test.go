package repair

import (
	"context"
	"errors"
	"strings"
	"sync"
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
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// apiServer is a fake clientset that checks delete preconditions the way the API server does
// (client-go's fake tracker ignores them) and records every delete's options.
type apiServer struct {
	kc      *fake.Clientset
	clients *kube.Clients
	mu      sync.Mutex
	deletes []metav1.DeleteOptions
	// beforeDelete runs before the precondition check, to race a change in.
	beforeDelete func()
	// afterDelete runs after a real delete, to play the operator.
	afterDelete func(ns, name string)
	// beforeAnswer runs after a real delete and before its answer: a slow API server's.
	beforeAnswer func(ns, name string)
}

func newAPIServer(objs ...runtime.Object) *apiServer {
	a := &apiServer{kc: fake.NewClientset(objs...)}
	a.clients = &kube.Clients{Kube: a.kc, Ray: rayfake.NewSimpleClientset()}
	a.kc.PrependReactor("delete", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		d := action.(k8stesting.DeleteActionImpl)
		a.mu.Lock()
		a.deletes = append(a.deletes, d.DeleteOptions)
		a.mu.Unlock()
		if a.beforeDelete != nil {
			a.beforeDelete()
		}
		obj, err := a.kc.Tracker().Get(podsGVR, d.Namespace, d.Name)
		if err != nil {
			return true, nil, err
		}
		p := obj.(*corev1.Pod)
		if pre := d.DeleteOptions.Preconditions; pre != nil {
			if pre.UID != nil && *pre.UID != p.UID || pre.ResourceVersion != nil && *pre.ResourceVersion != p.ResourceVersion {
				return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, d.Name,
					errString("Precondition failed: UID or ResourceVersion"))
			}
		}
		if len(d.DeleteOptions.DryRun) > 0 {
			return true, nil, nil
		}
		if err := a.kc.Tracker().Delete(podsGVR, d.Namespace, d.Name); err != nil {
			return true, nil, err
		}
		if a.afterDelete != nil {
			go a.afterDelete(d.Namespace, d.Name)
		}
		if a.beforeAnswer != nil {
			a.beforeAnswer(d.Namespace, d.Name)
		}
		return true, nil, nil
	})
	return a
}

type errString string

func (e errString) Error() string { return string(e) }

func (a *apiServer) events(t *testing.T) []corev1.Event {
	t.Helper()
	l, err := a.kc.CoreV1().Events("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func (a *apiServer) executor(dryRun bool) *Executor {
	// The timeout only bounds waits that end in milliseconds; it is generous because a loaded
	// machine (the e2e sandboxes compile and run beside the unit tests) can stall them for seconds.
	return &Executor{Deleter: a.clients, Events: a.clients, Watcher: a.clients, DryRun: dryRun, Timeout: 30 * time.Second}
}

// evictedPlan is heal's plan for the evicted head p of c (seed000's).
func evictedPlan(c rayv1.RayCluster, p corev1.Pod, s *state.Snapshot) HealPlan {
	return Plan(s, []diagnose.Finding{finding(diagnose.RuleHeadEvicted, c, &p)}, Options{})
}

func seed000() (rayv1.RayCluster, corev1.Pod, *state.Snapshot) {
	c := cluster("default", "raycluster-kuberay")
	p := evicted(head(c, "raycluster-kuberay-head-ldg9f"))
	return c, p, &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{p}}
}

func TestExecutorDeletesWithPreconditionsAndRecordsEvents(t *testing.T) {
	c, p, s := seed000()
	api := newAPIServer(p.DeepCopy())
	plan := evictedPlan(c, p, s)
	rep, err := api.executor(false).Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Outcomes) != 1 || rep.Outcomes[0].Result != Deleted ||
		rep.Outcomes[0].Message != "deleted pod default/raycluster-kuberay-head-ldg9f (rule head-evicted)" {
		t.Fatalf("outcomes: %+v", rep.Outcomes)
	}
	d := api.deletes[0]
	if *d.Preconditions.UID != p.UID || *d.Preconditions.ResourceVersion != "100" || d.GracePeriodSeconds != nil || len(d.DryRun) != 0 {
		t.Errorf("delete options: %+v", d)
	}
	if _, err := api.kc.Tracker().Get(podsGVR, p.Namespace, p.Name); !apierrors.IsNotFound(err) {
		t.Errorf("pod still there: %v", err)
	}
	evs := api.events(t)
	if len(evs) != 2 {
		t.Fatalf("want 2 events, got %d", len(evs))
	}
	kinds := map[string]bool{}
	for _, ev := range evs {
		kinds[ev.InvolvedObject.Kind] = true
		if ev.Reason != "RayHeadHealed" || ev.Source.Component != "kubectl-ray" || ev.Type != corev1.EventTypeNormal ||
			!strings.HasPrefix(ev.Message, "kubectl-ray heal deleted head pod raycluster-kuberay-head-ldg9f (uid uid-raycluster-kuberay-head-ldg9f) for rule head-evicted: phase Failed (Evicted)") {
			t.Errorf("event: %+v", ev)
		}
	}
	if !kinds["RayCluster"] || !kinds["Pod"] {
		t.Errorf("events on %v, want RayCluster and Pod", kinds)
	}
}

func TestExecutorDryRunChangesNothing(t *testing.T) {
	c, p, s := seed000()
	api := newAPIServer(p.DeepCopy())
	plan := evictedPlan(c, p, s)
	ex := api.executor(true)
	ex.Wait = true // ignored on a dry run
	rep, err := ex.Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcomes[0].Result != DryRun || len(rep.Replacements) != 0 {
		t.Fatalf("report: %+v", rep)
	}
	if d := api.deletes[0]; len(d.DryRun) != 1 || d.DryRun[0] != metav1.DryRunAll || d.Preconditions == nil {
		t.Errorf("delete options: %+v", d)
	}
	if _, err := api.kc.Tracker().Get(podsGVR, p.Namespace, p.Name); err != nil {
		t.Errorf("pod gone after a dry run: %v", err)
	}
	for _, a := range api.kc.Actions() {
		if cr, ok := a.(k8stesting.CreateActionImpl); ok {
			if opts := cr.CreateOptions; len(opts.DryRun) != 1 {
				t.Errorf("%s created without dry run", cr.Resource.Resource)
			}
		}
	}
}

func TestExecutorConflictReplansOnce(t *testing.T) {
	c, p, s := seed000()
	api := newAPIServer(p.DeepCopy())
	// The kubelet writes the status once more between plan and delete.
	changed := p.DeepCopy()
	changed.ResourceVersion = "101"
	api.beforeDelete = func() {
		_ = api.kc.Tracker().Update(podsGVR, changed.DeepCopy(), changed.Namespace)
		api.beforeDelete = nil
	}
	plan := evictedPlan(c, p, s)
	ex := api.executor(false)
	replans := 0
	ex.Replan = func(context.Context) (HealPlan, error) {
		replans++
		s2 := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{*changed}}
		return Plan(s2, []diagnose.Finding{finding(diagnose.RuleHeadEvicted, c, changed)}, Options{}), nil
	}
	rep, err := ex.Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if replans != 1 || len(rep.Outcomes) != 2 || rep.Outcomes[0].Result != Changed || rep.Outcomes[1].Result != Deleted || !rep.Outcomes[1].Retried {
		t.Fatalf("replans %d, outcomes %+v", replans, rep.Outcomes)
	}
	if rep.Outcomes[0].Message != "pod default/raycluster-kuberay-head-ldg9f changed since it was seen (uid uid-raycluster-kuberay-head-ldg9f, resourceVersion 100); not deleted" {
		t.Errorf("message: %q", rep.Outcomes[0].Message)
	}
	if got := *api.deletes[1].Preconditions.ResourceVersion; got != "101" {
		t.Errorf("retry used resourceVersion %s", got)
	}
}

func TestExecutorLeavesAReplacedPodAlone(t *testing.T) {
	c, p, s := seed000()
	api := newAPIServer(p.DeepCopy())
	// The pod is replaced between plan and delete by a new, Running one of the same name.
	replacement := head(c, p.Name)
	replacement.UID = "uid-new"
	replacement.ResourceVersion = "200"
	api.beforeDelete = func() {
		_ = api.kc.Tracker().Update(podsGVR, replacement.DeepCopy(), replacement.Namespace)
	}
	plan := evictedPlan(c, p, s)
	ex := api.executor(false)
	ex.Replan = func(context.Context) (HealPlan, error) {
		s2 := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{replacement}}
		return Plan(s2, nil, Options{}), nil
	}
	rep, err := ex.Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Outcomes) != 2 || rep.Outcomes[1].Result != Changed ||
		rep.Outcomes[1].Message != "pod default/raycluster-kuberay-head-ldg9f changed since it was seen and needs no heal any more; not deleted" {
		t.Fatalf("outcomes: %+v", rep.Outcomes)
	}
	obj, err := api.kc.Tracker().Get(podsGVR, p.Namespace, p.Name)
	if err != nil || obj.(*corev1.Pod).UID != "uid-new" {
		t.Fatalf("the new pod was touched: %v", err)
	}
	if len(api.deletes) != 1 || len(api.events(t)) != 0 {
		t.Errorf("deletes %d, events %d", len(api.deletes), len(api.events(t)))
	}
}

// A pod already gone (someone else deleted it, the operator replaced it under another name) is
// reported once and not looked at again: no pod of that UID can come back.
func TestExecutorGonePodIsNotReplanned(t *testing.T) {
	c, p, s := seed000()
	api := newAPIServer(p.DeepCopy())
	api.beforeDelete = func() { _ = api.kc.Tracker().Delete(podsGVR, p.Namespace, p.Name) }
	plan := evictedPlan(c, p, s)
	ex := api.executor(false)
	replans := 0
	ex.Replan = func(context.Context) (HealPlan, error) { replans++; return HealPlan{}, nil }
	ex.Wait = true
	rep, err := ex.Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if replans != 0 || len(rep.Outcomes) != 1 || rep.Outcomes[0].Result != Gone ||
		rep.Outcomes[0].Message != "pod default/raycluster-kuberay-head-ldg9f is already gone; not deleted" {
		t.Fatalf("replans %d, outcomes %+v", replans, rep.Outcomes)
	}
	if rep.Problems() != 0 || rep.TimedOut || len(rep.Replacements) != 0 || len(api.events(t)) != 0 {
		t.Errorf("problems %d, timed out %v, replacements %+v, events %d", rep.Problems(), rep.TimedOut, rep.Replacements, len(api.events(t)))
	}
}

func TestExecutorWaitsForTheReplacement(t *testing.T) {
	c, p, s := seed000()
	api := newAPIServer(p.DeepCopy())
	// Play the operator: a new head appears Pending, then Running and Ready.
	api.afterDelete = func(ns, _ string) {
		time.Sleep(20 * time.Millisecond)
		n := head(c, "raycluster-kuberay-head-new")
		n.CreationTimestamp = metav1.Now()
		n.Status = corev1.PodStatus{Phase: corev1.PodPending}
		_ = api.kc.Tracker().Create(podsGVR, n.DeepCopy(), ns)
		time.Sleep(30 * time.Millisecond)
		n.Status = head(c, "x").Status
		n.ResourceVersion = "101"
		_ = api.kc.Tracker().Update(podsGVR, n.DeepCopy(), ns)
	}
	plan := evictedPlan(c, p, s)
	ex := api.executor(false)
	ex.Wait = true
	rep, err := ex.Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if rep.TimedOut || len(rep.Replacements) != 1 {
		t.Fatalf("report: %+v", rep)
	}
	// Only the order of the times: how late the watch's handler sees each event is the machine's
	// (a loaded CI run saw the Pending head first when it was already Ready).
	// TestWaiterTimesFirstSightAndReady holds the times themselves.
	r := rep.Replacements[0]
	if r.Pod != "raycluster-kuberay-head-new" || !r.Ready || r.Existing || r.SeenAfter > r.ReadyAfter ||
		r.OldPods[0] != "raycluster-kuberay-head-ldg9f" {
		t.Fatalf("replacement: %+v", r)
	}
}

// SeenAfter runs from the delete's answer to the first sight of the new head, ReadyAfter to the
// sight of it Running and Ready; later sights of the same head do not move the first.
func TestWaiterTimesFirstSightAndReady(t *testing.T) {
	c, p, _ := seed000()
	now := t0
	w := newWaiter(func() time.Time { return now })
	ref := state.Ref{Kind: "RayCluster", Namespace: c.Namespace, Name: c.Name, UID: string(c.UID)}
	w.expect(ref, p.UID, p.Name, t0, t0)
	w.seal()

	n := head(c, "raycluster-kuberay-head-new")
	n.UID = "uid-new"
	n.CreationTimestamp = metav1.NewTime(t0.Add(time.Second))
	ready := n.Status
	n.Status = corev1.PodStatus{Phase: corev1.PodPending}
	now = t0.Add(20 * time.Millisecond)
	w.observe(n.DeepCopy())
	now = t0.Add(35 * time.Millisecond)
	w.observe(n.DeepCopy()) // the scheduler binds it: seen again, still starting
	select {
	case <-w.done:
		t.Fatal("done before the new head was ready")
	default:
	}
	n.Status = ready
	now = t0.Add(50 * time.Millisecond)
	w.observe(n.DeepCopy())
	select {
	case <-w.done:
	default:
		t.Fatal("not done with the new head Running and Ready")
	}
	r := w.targets[types.NamespacedName{Namespace: c.Namespace, Name: c.Name}].r
	if r.Pod != n.Name || !r.Ready || r.Existing || r.SeenAfter != 20*time.Millisecond || r.ReadyAfter != 50*time.Millisecond {
		t.Fatalf("replacement: %+v", r)
	}
}

// A loaded API server answers the delete after the operator already created the new head, in a
// later second than the head's creationTimestamp: the head is still a new one, not "already
// there" (a cold CI run printed that for seed 000).
func TestExecutorWaitNewHeadBeforeTheDeleteAnswered(t *testing.T) {
	c, p, s := seed000()
	api := newAPIServer(p.DeepCopy())
	api.beforeAnswer = func(ns, _ string) {
		n := head(c, "raycluster-kuberay-head-new")
		n.CreationTimestamp = metav1.Now()
		_ = api.kc.Tracker().Create(podsGVR, n.DeepCopy(), ns)
		time.Sleep(1100 * time.Millisecond) // the answer comes in a later second
	}
	ex := api.executor(false)
	ex.Wait = true
	rep, err := ex.Run(context.Background(), evictedPlan(c, p, s))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Replacements) != 1 || rep.Replacements[0].Pod != "raycluster-kuberay-head-new" || rep.Replacements[0].Existing || !rep.Replacements[0].Ready {
		t.Fatalf("replacements: %+v", rep.Replacements)
	}
}

func TestExecutorWaitTimesOut(t *testing.T) {
	c, p, s := seed000()
	api := newAPIServer(p.DeepCopy())
	plan := evictedPlan(c, p, s)
	ex := api.executor(false)
	ex.Wait, ex.Timeout = true, 100*time.Millisecond
	rep, err := ex.Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.TimedOut || len(rep.Replacements) != 1 || rep.Replacements[0].Pod != "" || rep.Replacements[0].Ready {
		t.Fatalf("report: %+v", rep)
	}
}

func TestExecutorReportsForbiddenEvents(t *testing.T) {
	c, p, s := seed000()
	api := newAPIServer(p.DeepCopy())
	api.kc.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "", errString("no"))
	})
	plan := evictedPlan(c, p, s)
	rep, err := api.executor(false).Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	o := rep.Outcomes[0]
	if o.Result != Deleted || !strings.HasPrefix(o.EventProblem, `Events not recorded: forbidden: you cannot create events in namespace "default"`) {
		t.Fatalf("outcome: %+v", o)
	}
}

// Evidence is kept before the delete (the pod is still there to read), and a failure to keep it
// never stops the heal: the outage matters more.
func TestExecutorKeepsEvidenceBeforeTheDeleteAndHealsWithout(t *testing.T) {
	for _, keepErr := range []error{nil, errors.New("not kept: disk full")} {
		c, p, s := seed000()
		api := newAPIServer(p.DeepCopy())
		ex := api.executor(false)
		var podThere error
		ex.Keep = func(ctx context.Context, a Action) (string, error) {
			_, podThere = api.kc.Tracker().Get(podsGVR, a.Pod.Namespace, a.Pod.Name)
			if keepErr != nil {
				return "", keepErr
			}
			return "evidence/default/x", nil
		}
		rep, err := ex.Run(context.Background(), evictedPlan(c, p, s))
		if err != nil {
			t.Fatal(err)
		}
		o := rep.Outcomes[0]
		if podThere != nil {
			t.Errorf("Keep ran after the delete: %v", podThere)
		}
		if o.Result != Deleted || rep.Problems() != 0 {
			t.Errorf("keep error %v: result %s, %d problems; want deleted, none", keepErr, o.Result, rep.Problems())
		}
		want := Outcome{Evidence: "evidence/default/x"}
		if keepErr != nil {
			want = Outcome{EvidenceProblem: "evidence of pod default/raycluster-kuberay-head-ldg9f not kept: disk full; healing anyway"}
		}
		if o.Evidence != want.Evidence || o.EvidenceProblem != want.EvidenceProblem {
			t.Errorf("evidence %q, problem %q; want %q, %q", o.Evidence, o.EvidenceProblem, want.Evidence, want.EvidenceProblem)
		}
	}
}

func TestExecutorDryRunKeepsNoEvidence(t *testing.T) {
	c, p, s := seed000()
	api := newAPIServer(p.DeepCopy())
	ex := api.executor(true)
	ex.Keep = func(context.Context, Action) (string, error) {
		t.Error("Keep called on a dry run")
		return "", nil
	}
	if _, err := ex.Run(context.Background(), evictedPlan(c, p, s)); err != nil {
		t.Fatal(err)
	}
}
