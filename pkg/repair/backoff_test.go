package repair

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// A cluster in a recreate loop gets no delete, even for a head that is terminal (which heal would
// otherwise replace); another cluster in the same plan is still healed.
func TestPlanBacksOffARecreateLoop(t *testing.T) {
	looping, fine := cluster("ns", "loop"), cluster("ns", "fine")
	lp, fp := evicted(head(looping, "loop-head-a")), evicted(head(fine, "fine-head-b"))
	s := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{looping, fine}, Pods: []corev1.Pod{lp, fp}}
	loop := finding(diagnose.RuleHeadRecreateLoop, looping, &lp)
	loop.Facts.Loop = &diagnose.RecreateLoop{Deletions: 4, Window: 6*time.Minute + 20*time.Second, LastExit: &diagnose.Exit{Code: 137, Reason: "OOMKilled"}}
	got := Plan(s, []diagnose.Finding{
		finding(diagnose.RuleHeadEvicted, looping, &lp), loop, finding(diagnose.RuleHeadEvicted, fine, &fp),
	}, Options{})
	if len(got.Actions) != 1 || got.Actions[0].Pod.Name != "fine-head-b" {
		t.Fatalf("actions = %+v, want only fine-head-b", got.Actions)
	}
	rules := map[string]string{}
	for _, sk := range got.NotHealable {
		if sk.Cluster.Name != "loop" || sk.Object.Name != "loop-head-a" {
			t.Errorf("skip about %s/%s", sk.Cluster.Name, sk.Object.Name)
		}
		rules[sk.Rule] = sk.Why
	}
	for _, r := range []string{diagnose.RuleHeadEvicted, diagnose.RuleHeadRecreateLoop} {
		why, ok := rules[r]
		if !ok {
			t.Fatalf("no skip for %s: %+v", r, got.NotHealable)
		}
		for _, part := range []string{"heal backs off", "recreated 4 times in the last 6m", "kuberay #4272", "last exit 137 (OOMKilled)"} {
			if !strings.Contains(why, part) {
				t.Errorf("%s: %q lacks %q", r, why, part)
			}
		}
	}
}

// recordingEvents keeps the Events the watchdog writes.
type recordingEvents struct {
	mu  sync.Mutex
	evs []*corev1.Event
}

func (r *recordingEvents) CreateEvent(_ context.Context, ev *corev1.Event, _ bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
	return nil
}

func (r *recordingEvents) reasons() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.evs {
		out = append(out, ev.Reason+" "+ev.InvolvedObject.Kind+"/"+ev.InvolvedObject.Name)
	}
	return out
}

// operatorDeletedHead is the Event KubeRay v1.5+ records when it deletes a head.
func operatorDeletedHead(c rayv1.RayCluster, pod string, at time.Time) corev1.Event {
	return corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: c.Name + "." + pod, Namespace: c.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "RayCluster", Namespace: c.Namespace, Name: c.Name, UID: c.UID},
		Reason:         "DeletedHeadPod", Count: 1,
		Message:        "Deleted head Pod " + c.Namespace + "/" + pod + "; Pod status: Failed; Pod restart policy: Never; Ray container terminated status: &ContainerStateTerminated{ExitCode:137,Signal:0,Reason:OOMKilled,}",
		FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at),
	}
}

// The watchdog leaves a looping cluster's evicted head alone for as long as it watches, and
// records the back-off once as an Event on the RayCluster.
func TestWatchdogBacksOffARecreateLoop(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := cluster("ml", "rc")
	s := state.Snapshot{Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{evicted(head(c, "rc-head"))},
		Events: []corev1.Event{operatorDeletedHead(c, "rc-head-1", t0.Add(-3*time.Minute)),
			operatorDeletedHead(c, "rc-head-2", t0.Add(-2*time.Minute)), operatorDeletedHead(c, "rc-head-3", t0.Add(-time.Minute))},
		Blind: []state.Gap{{Resource: "deployments", Reason: "not watched"}, {Resource: "nodes", Reason: "not watched"}}}
	del := &countingDeleter{}
	rec := &recordingEvents{}
	rules := diagnose.DefaultOptions()
	w := NewLoop(LoopConfig{
		Cache:    fixedCache{s},
		Diagnose: func(s *state.Snapshot) []diagnose.Finding { return diagnose.Diagnose(s, rules).Findings },
		Exec:     &Executor{Deleter: del, Events: rec, Now: clk.Now},
		Now:      clk.Now, Clock: clk, Workers: 1,
		Log:    NewLogger(io.Discard, "logfmt", clk.Now),
		MinAge: 10 * time.Second,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for i := 0; i < 3; i++ {
		w.Changed(types.NamespacedName{Namespace: "ml", Name: "rc"})
		clk.Step(30 * time.Second) // past MinAge: a healable head would be deleted by now
		waitCalls(t, del, 0)
	}
	if got := rec.reasons(); len(got) != 1 || got[0] != EventReasonBackedOff+" RayCluster/rc" {
		t.Fatalf("events = %q, want one %s on the RayCluster", got, EventReasonBackedOff)
	}
	if msg := rec.evs[0].Message; !strings.Contains(msg, "heal backs off") || !strings.Contains(msg, "kuberay #4272") {
		t.Errorf("event message %q", msg)
	}
}

// workers-stale: nothing is deleted without --stale-workers (and heal says how to ask); with it,
// each Running worker the finding names, with its UID and resourceVersion as preconditions, and
// never the head.
func TestPlanStaleWorkers(t *testing.T) {
	c := cluster("ns", "rc")
	h := head(c, "rc-head-new")
	w := head(c, "rc-worker-old")
	w.Labels[ray.LabelNodeType] = ray.NodeTypeWorker
	w.ResourceVersion = "42"
	gone := head(c, "rc-worker-leaving")
	gone.Labels[ray.LabelNodeType] = ray.NodeTypeWorker
	now := metav1.NewTime(t0)
	gone.DeletionTimestamp = &now
	s := &state.Snapshot{Now: t0, Clusters: []rayv1.RayCluster{c}, Pods: []corev1.Pod{h, w, gone}}
	f := diagnose.Finding{Rule: diagnose.RuleWorkersStale, Cluster: state.Ref{Kind: "RayCluster", Namespace: "ns", Name: "rc", UID: string(c.UID)},
		Object: state.Ref{Kind: "RayCluster", Namespace: "ns", Name: "rc"},
		Facts:  diagnose.Facts{Pods: []state.Ref{state.PodRef(&w), state.PodRef(&gone)}, Head: "rc-head-new"}}

	p := Plan(s, []diagnose.Finding{f}, Options{Name: asFlag})
	if len(p.Actions) != 0 || len(p.NotHealable) != 1 || !strings.Contains(p.NotHealable[0].Why, "pass --stale-workers") {
		t.Fatalf("without --stale-workers: %+v", p)
	}
	p = Plan(s, []diagnose.Finding{f}, Options{StaleWorkers: true})
	if len(p.Actions) != 1 || p.Actions[0].Pod.Name != "rc-worker-old" || p.Actions[0].ResourceVersion != "42" || p.Actions[0].Pod.UID != string(w.UID) {
		t.Fatalf("with --stale-workers: actions %+v", p.Actions)
	}
	if len(p.NotHealable) != 1 || p.NotHealable[0].Object.Name != "rc-worker-leaving" {
		t.Fatalf("with --stale-workers: not healable %+v", p.NotHealable)
	}
	evs := HealEvents(p.Actions[0], t0, false)
	if !strings.Contains(evs[0].Message, "deleted worker pod rc-worker-old") || evs[0].Reason != EventReason {
		t.Errorf("event %q", evs[0].Message)
	}

	// A suspended RayCluster gets no new workers: none is deleted.
	yes := true
	s.Clusters[0].Spec.Suspend = &yes
	p = Plan(s, []diagnose.Finding{f}, Options{StaleWorkers: true})
	if len(p.Actions) != 0 || len(p.NotHealable) != 2 || p.NotHealable[0].Why != "its RayCluster is suspended; the operator would not create a new worker" {
		t.Fatalf("suspended: %+v", p)
	}
}
