// Package repair is heal's core: which of doctor's findings a pod delete fixes (Plan), and how
// the deletes are carried out safely (Executor). Planning is a pure function of a Snapshot and
// the findings diagnose.Diagnose produced from it: heal never detects problems on its own, so
// doctor and heal cannot disagree about what is broken.
package repair

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// rulePriority orders the rules that may fire on the same pod: the first one names the action.
var rulePriority = map[string]int{
	diagnose.RuleHeadEvicted:          0,
	diagnose.RuleHeadTerminated:       1,
	diagnose.RuleHeadDuplicate:        2,
	diagnose.RuleHeadTerminatingStuck: 3,
}

// notHealableWhy explains the head findings a delete cannot fix.
var notHealableWhy = map[string]string{
	diagnose.RuleHeadPending: "the head is Pending; a new pod would get the same spec and wait the same way: " +
		"fix its resources, node selector, affinity or tolerations",
	diagnose.RuleHeadCrashLoop: "the head's containers keep failing; a new pod would run the same spec and fail " +
		"the same way: fix the image, command, memory or probes",
	diagnose.RuleHeadStarvedByWorkers: "the head is Pending while the cluster's own workers hold the capacity; a new pod " +
		"would wait the same way: give the head a higher priorityClass than the workers, or use gang scheduling",
	diagnose.RuleHeadMissing: "there is no head pod to delete; creating heads is the operator's job: " +
		"check that the KubeRay operator is running",
	diagnose.RuleWorkerCrashLoop: "the worker's container keeps failing; a new pod would run the same spec and fail the same way: " +
		"fix the image, command, memory or probes",
	diagnose.RuleWorkerPending: "the workers wait for a node the scheduler can place them on; a new pod would wait the same way: " +
		"free or add capacity, or change the group's requests, node selector, affinity or tolerations",
	diagnose.RuleWorkersMissing: "there is no worker pod to delete: the API server refuses the operator's new workers; " +
		"fix what doctor quotes (a ResourceQuota, LimitRange, Pod Security, a webhook) and the operator creates them",
	diagnose.RuleImagePullFailed: "the image cannot be pulled; a new pod would pull the same image and wait the same way: " +
		"fix the image name, its tag or the pull secret",
}

// Plan decides, for each head finding, whether deleting the pod is the repair. It only acts on
// pods it can prove are safe to delete: a Ray head (ray.io/is-ray-node=yes, node-type head)
// controlled by the finding's RayCluster, which exists and is not suspended or being deleted,
// and that is not running: terminal (Failed or Succeeded), or with opts.Force, already being
// deleted on a node that is NotReady, unreachable or gone.
func Plan(s *state.Snapshot, findings []diagnose.Finding, opts Options) HealPlan {
	ix := newIndex(s)
	var p HealPlan
	chosen := map[types.UID]int{} // pod UID → index in p.Actions
	skipped := map[string]bool{}
	skip := func(sk Skip) {
		key := sk.Rule + "/" + sk.Object.Namespace + "/" + sk.Object.Name
		if !skipped[key] {
			skipped[key] = true
			p.NotHealable = append(p.NotHealable, sk)
		}
	}
	add := func(a Action) {
		uid := types.UID(a.Pod.UID)
		if i, ok := chosen[uid]; ok {
			if rulePriority[a.Rule] < rulePriority[p.Actions[i].Rule] {
				p.Actions[i] = a
			}
			return
		}
		chosen[uid] = len(p.Actions)
		p.Actions = append(p.Actions, a)
	}

	for _, f := range findings {
		switch f.Rule {
		case diagnose.RuleHeadEvicted, diagnose.RuleHeadTerminated, diagnose.RuleHeadTerminatingStuck:
			if f.Rule == diagnose.RuleHeadTerminatingStuck {
				p.Stuck++
			}
			pod, why := ix.findingPod(f)
			if pod == nil {
				skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: f.Object, Why: why})
				continue
			}
			if why := operatorReplacesWhy(s, f); why != "" {
				skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: state.PodRef(pod), Why: why})
				continue
			}
			if a, why := ix.action(f.Rule, f.Cluster, pod, opts); why != "" {
				skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: state.PodRef(pod), Why: why})
			} else {
				add(a)
			}
		case diagnose.RuleHeadDuplicate:
			ix.planDuplicate(f, opts, add, skip)
		case diagnose.RuleHeadRestartDisabled:
			skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: f.Object, Why: restartDisabledWhy(f.Facts.Operator)})
		case diagnose.RuleWorkersStale:
			ix.planStaleWorkers(f, opts, add, skip)
		case diagnose.RuleWorkerFailed:
			ix.planFailedWorkers(f, add, skip)
		case diagnose.RuleHeadPending, diagnose.RuleHeadStarvedByWorkers, diagnose.RuleHeadCrashLoop, diagnose.RuleHeadMissing, diagnose.RuleImagePullFailed, diagnose.RuleWorkerPending, diagnose.RuleWorkerCrashLoop, diagnose.RuleWorkersMissing:
			skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: f.Object, Why: notHealableWhy[f.Rule]})
		case diagnose.RuleGCSFTFinalizerStuck:
			p.FinalizersStuck++
			if r, sk := ix.planFinalizer(f, opts); sk != nil {
				skip(*sk)
			} else {
				p.FinalizerRemovals = append(p.FinalizerRemovals, *r)
			}
		}
		// Other rules (status, nodes, operator, workers, serve, GCS FT) are not head repairs:
		// doctor reports them with their remedies.
	}
	// A pod healed under one rule is not also "not healable" under another.
	kept := p.NotHealable[:0]
	for _, sk := range p.NotHealable {
		if _, ok := chosen[types.UID(sk.Object.UID)]; sk.Object.UID != "" && ok {
			continue
		}
		kept = append(kept, sk)
	}
	p.NotHealable = kept
	p.Actions = backOffLoops(p.Actions, findings, skip)
	// Reasons quote pod status messages, which can echo a command line or a Redis URI; they are
	// printed, logged and written into Events, so they go through doctor's redactor.
	redact := state.Redactor(s).String
	for i := range p.Actions {
		p.Actions[i].Why = redact(p.Actions[i].Why)
		p.Actions[i].Summary = redact(p.Actions[i].Summary)
	}
	for i := range p.NotHealable {
		p.NotHealable[i].Why = redact(p.NotHealable[i].Why)
	}
	sort.SliceStable(p.Actions, func(i, j int) bool { return refLess(p.Actions[i].Pod, p.Actions[j].Pod) })
	sort.SliceStable(p.NotHealable, func(i, j int) bool {
		a, b := p.NotHealable[i], p.NotHealable[j]
		if a.Cluster != b.Cluster {
			return refLess(a.Cluster, b.Cluster)
		}
		if a.Object != b.Object {
			return refLess(a.Object, b.Object)
		}
		return a.Rule < b.Rule
	})
	return p
}

// planDuplicate heals the extra head doctor named when it is terminal (or, with Force, stuck on a
// dead node). A finding that names the cluster rather than a pod covers all its terminal heads.
func (ix *index) planDuplicate(f diagnose.Finding, opts Options, add func(Action), skip func(Skip)) {
	var heads []*corev1.Pod
	if f.Object.Kind == "Pod" || f.Object.Kind == "" {
		pod, why := ix.findingPod(f)
		if pod == nil {
			skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: f.Object, Why: why})
			return
		}
		heads = []*corev1.Pod{pod}
	} else {
		heads = ix.heads(f.Cluster)
	}
	healed := 0
	var reasons []string
	for _, pod := range heads {
		if !ray.Terminal(pod) && pod.DeletionTimestamp == nil {
			continue // a live head: a delete would take a working head away
		}
		a, why := ix.action(diagnose.RuleHeadDuplicate, f.Cluster, pod, opts)
		if why != "" {
			reasons = append(reasons, why)
			continue
		}
		add(a)
		healed++
	}
	if healed > 0 {
		return
	}
	why := "the extra head is live; heal deletes only terminal heads, never one that may be running"
	if len(reasons) > 0 {
		why = strings.Join(reasons, "; ")
	}
	obj := f.Object
	if len(heads) == 1 {
		obj = state.PodRef(heads[0])
	}
	skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: obj, Why: why})
}
