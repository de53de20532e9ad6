package repair

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// PodDeleter deletes one pod only while it is still the object that was seen: uid and
// resourceVersion go into metav1.Preconditions. A pod changed since is answered with a
// Conflict error, a pod already gone with NotFound (both as the API returns them).
type PodDeleter interface {
	DeletePod(ctx context.Context, namespace, name string, uid types.UID, resourceVersion string, grace *int64, dryRun bool) error
}

// EventSink records a Kubernetes Event (server-side dry-run when dryRun).
type EventSink interface {
	CreateEvent(ctx context.Context, ev *corev1.Event, dryRun bool) error
}

// PodWatcher lists then watches pods matching selector in namespace ("" for all), calling
// handle for each added or changed pod, until ctx ends or a fatal error (such as forbidden).
type PodWatcher interface {
	WatchPods(ctx context.Context, namespace, selector string, handle func(*corev1.Pod)) error
}

// Result is what became of one action.
type Result string

const (
	Deleted Result = "deleted"
	// DryRun: the API server accepted the delete as a server-side dry run; nothing changed.
	DryRun  Result = "dry-run"
	Changed Result = "changed" // the pod changed since it was seen: not deleted
	Gone    Result = "gone"    // the pod was already gone: not deleted
	Failed  Result = "failed"
)

// Outcome is one action's result, with a line for a person.
type Outcome struct {
	Action  Action    `json:"action"`
	Result  Result    `json:"result"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
	// Sent is when the delete was sent; At, when its answer came. A pod created before Sent
	// existed before the delete.
	Sent time.Time `json:"-"`
	// Retried: this outcome is from the one re-plan after the pod changed.
	Retried bool `json:"retried,omitempty"`
	// EventProblem says why the Events could not be recorded; the delete itself stands.
	EventProblem string `json:"eventProblem,omitempty"`
	// Evidence is where the pod's evidence was kept before the delete (Executor.Keep);
	// EvidenceProblem, why it could not be: the delete went ahead regardless.
	Evidence        string `json:"evidence,omitempty"`
	EvidenceProblem string `json:"evidenceProblem,omitempty"`
	Err             error  `json:"-"`
}

// Report is what an Executor run did.
type Report struct {
	DryRun       bool          `json:"dryRun"`
	Outcomes     []Outcome     `json:"outcomes"`
	Replacements []Replacement `json:"replacements,omitempty"`
	// Finalizers are the outcomes of the plan's finalizer removals.
	Finalizers []FinalizerOutcome `json:"finalizers,omitempty"`
	// TimedOut: Wait gave up before every cluster had a Running and Ready head.
	TimedOut bool `json:"timedOut,omitempty"`
}

// Problems counts deletes that failed, including pods that changed again after the re-plan.
func (r Report) Problems() int {
	n := 0
	for _, o := range r.Outcomes {
		if o.Result == Failed {
			n++
		}
	}
	for _, o := range r.Finalizers {
		if o.Result == Failed {
			n++
		}
	}
	return n
}

// Executor carries out a HealPlan safely.
type Executor struct {
	Deleter PodDeleter
	Events  EventSink
	// Watcher is needed only with Wait.
	Watcher PodWatcher
	// Finalizers is needed only for plans with finalizer removals.
	Finalizers FinalizerRemover
	// FinalizerProgress, when set, hears each finalizer outcome as it happens.
	FinalizerProgress func(FinalizerOutcome)
	// Replan re-reads the cluster and plans again; called at most once per Run, after a pod
	// changed since it was seen. nil: no retry.
	Replan func(ctx context.Context) (HealPlan, error)
	DryRun bool
	// Wait for each healed cluster's replacement head to be Running and Ready, up to Timeout.
	Wait    bool
	Timeout time.Duration
	Now     func() time.Time
	// Progress, when set, hears each outcome as it happens.
	Progress func(Outcome)
	// Keep, when set, keeps a pod's evidence (its YAML, Events and logs) just before its delete,
	// which takes them with the pod (kuberay #1047). It says where the evidence went, or why it
	// could not be kept; either way the delete goes ahead: the outage matters more. Not called
	// on a dry run.
	Keep func(ctx context.Context, a Action) (where string, err error)
}

// Run deletes the plan's pods. It returns an error only when it cannot go on (the context ended
// or the watch for replacements failed); per-pod problems are in the Report.
func (e *Executor) Run(ctx context.Context, plan HealPlan) (Report, error) {
	rep := Report{DryRun: e.DryRun}
	wait := e.Wait && !e.DryRun && len(plan.Actions) > 0
	var w *waiter
	watchErr := make(chan error, 1)
	if wait {
		// The watch starts before the first delete, so the replacement's first appearance is
		// timed from the moment it happens, not from when a later watch would list it.
		w = newWaiter(e.now)
		watchCtx, stop := context.WithCancel(ctx)
		defer stop()
		ns, sel := waitScope(plan.Actions)
		go func() { watchErr <- e.Watcher.WatchPods(watchCtx, ns, sel, w.observe) }()
	}

	var retry []Action
	for _, a := range plan.Actions {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		o := e.apply(ctx, a, false)
		e.record(&rep, o, w)
		// Only a changed pod is looked at again. A pod already gone (404) cannot come back:
		// a pod of the same name would have another UID, which the person did not confirm.
		if o.Result == Changed {
			retry = append(retry, a)
		}
	}
	if len(retry) > 0 && e.Replan != nil {
		if err := e.replan(ctx, retry, &rep, w); err != nil {
			return rep, err
		}
	}
	for _, r := range plan.FinalizerRemovals {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		o := e.removeFinalizer(ctx, r)
		rep.Finalizers = append(rep.Finalizers, o)
		if e.FinalizerProgress != nil {
			e.FinalizerProgress(o)
		}
	}
	if !wait {
		return rep, nil
	}
	w.seal()
	if w.empty() {
		return rep, nil
	}
	timer := time.NewTimer(e.Timeout)
	defer timer.Stop()
	select {
	case <-w.done:
	case <-timer.C:
		rep.TimedOut = true
	case err := <-watchErr:
		rep.Replacements = w.results()
		if err == nil {
			err = ctx.Err()
		}
		return rep, err
	case <-ctx.Done():
		rep.Replacements = w.results()
		return rep, ctx.Err()
	}
	rep.Replacements = w.results()
	return rep, nil
}

// replan re-reads once, and deletes again only the same pods (same UID) that are still healable:
// the person confirmed those pods, not whatever else the new plan holds.
func (e *Executor) replan(ctx context.Context, retry []Action, rep *Report, w *waiter) error {
	np, err := e.Replan(ctx)
	if err != nil {
		return fmt.Errorf("re-reading after a pod changed: %w", err)
	}
	for _, old := range retry {
		a, ok := findAction(np, old.Pod.UID)
		if ok {
			e.record(rep, e.apply(ctx, a, true), w)
			continue
		}
		o := Outcome{Action: old, Result: Changed, At: e.now(), Retried: true}
		if sk, ok := findSkip(np, old.Pod.UID); ok {
			o.Message = fmt.Sprintf("pod %s/%s changed since it was seen and is no longer healable: %s; not deleted", old.Pod.Namespace, old.Pod.Name, sk.Why)
		} else {
			o.Message = fmt.Sprintf("pod %s/%s changed since it was seen and needs no heal any more; not deleted", old.Pod.Namespace, old.Pod.Name)
		}
		e.record(rep, o, w)
	}
	return nil
}

func (e *Executor) record(rep *Report, o Outcome, w *waiter) {
	rep.Outcomes = append(rep.Outcomes, o)
	if w != nil && o.Result == Deleted && o.Action.Role() == "head" {
		w.expect(o.Action.Cluster, types.UID(o.Action.Pod.UID), o.Action.Pod.Name, o.At, o.Sent)
	}
	if e.Progress != nil {
		e.Progress(o)
	}
}

// apply deletes one pod with preconditions and records the Events.
func (e *Executor) apply(ctx context.Context, a Action, retried bool) Outcome {
	pod := a.Pod.Namespace + "/" + a.Pod.Name
	var kept, keepProblem string
	if e.Keep != nil && !e.DryRun {
		where, err := e.Keep(ctx, a)
		kept = where
		if err != nil {
			keepProblem = fmt.Sprintf("evidence of pod %s %v; healing anyway", pod, err)
		}
	}
	sent := e.now()
	err := e.Deleter.DeletePod(ctx, a.Pod.Namespace, a.Pod.Name, types.UID(a.Pod.UID), a.ResourceVersion, a.GracePeriodSeconds, e.DryRun)
	o := Outcome{Action: a, At: e.now(), Sent: sent, Retried: retried, Err: err, Evidence: kept, EvidenceProblem: keepProblem}
	switch {
	case err == nil && e.DryRun:
		o.Result = DryRun
		o.Message = fmt.Sprintf("would %s pod %s (rule %s); server-side dry run accepted, nothing changed", a.Verb(), pod, a.Rule)
	case err == nil:
		o.Result = Deleted
		o.Message = fmt.Sprintf("%s pod %s (rule %s)", past(a), pod, a.Rule)
	case apierrors.IsConflict(err):
		o.Result = Changed
		o.Message = fmt.Sprintf("pod %s changed since it was seen (uid %s, resourceVersion %s); not deleted", pod, a.Pod.UID, a.ResourceVersion)
		if retried {
			o.Result = Failed
			o.Message = fmt.Sprintf("pod %s changed again since it was re-read; not deleted; run heal again", pod)
		}
		return o
	case apierrors.IsNotFound(err):
		o.Result = Gone
		o.Message = fmt.Sprintf("pod %s is already gone; not deleted", pod)
		return o
	default:
		o.Result = Failed
		o.Message = fmt.Sprintf("pod %s not deleted: %v", pod, err)
		return o
	}
	var problems []error
	for _, ev := range HealEvents(a, o.At, e.DryRun) {
		if err := e.Events.CreateEvent(ctx, ev, e.DryRun); err != nil {
			problems = append(problems, err)
		}
	}
	if len(problems) > 0 {
		o.EventProblem = "Events not recorded: " + errors.Join(problems...).Error()
	}
	return o
}

func past(a Action) string {
	if a.Force() {
		return "force-deleted (grace period 0)"
	}
	return "deleted"
}

func (e *Executor) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func findAction(p HealPlan, uid string) (Action, bool) {
	for _, a := range p.Actions {
		if a.Pod.UID == uid {
			return a, true
		}
	}
	return Action{}, false
}

func findSkip(p HealPlan, uid string) (Skip, bool) {
	for _, s := range p.NotHealable {
		if s.Object.UID == uid {
			return s, true
		}
	}
	return Skip{}, false
}

// waitScope is the namespace and label selector of the one watch that sees every healed
// cluster's heads.
func waitScope(actions []Action) (string, string) {
	ns := actions[0].Cluster.Namespace
	names := map[string]bool{}
	var list []string
	for _, a := range actions {
		if a.Cluster.Namespace != ns {
			ns = ""
		}
		if !names[a.Cluster.Name] {
			names[a.Cluster.Name] = true
			list = append(list, a.Cluster.Name)
		}
	}
	if len(list) == 1 {
		return ns, ray.HeadSelector(list[0])
	}
	return ns, fmt.Sprintf("%s in (%s),%s=%s", ray.LabelCluster, strings.Join(list, ","), ray.LabelNodeType, ray.NodeTypeHead)
}
