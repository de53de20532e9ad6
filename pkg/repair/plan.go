// Package repair is heal's core: which of doctor's findings a pod delete fixes (Plan), and how
// the deletes are carried out safely (Executor). Planning is a pure function of a Snapshot and
// the findings diagnose.Diagnose produced from it: heal never detects problems on its own, so
// doctor and heal cannot disagree about what is broken.
package repair

import (
	"fmt"
	"sort"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Options change what Plan may do.
type Options struct {
	// Force allows force-deleting (grace period 0) a head stuck Terminating on a node that is
	// NotReady, unreachable or gone. Nothing else is ever force-deleted.
	Force bool
	// StaleWorkers allows deleting the Running workers of a workers-stale finding.
	StaleWorkers bool
	// RemoveGCSFTFinalizer allows removing KubeRay's Redis cleanup finalizer from RayClusters
	// whose deletion it holds (gcs-ft-finalizer-stuck). Never without it: the removal leaves the
	// cluster's GCS data in Redis.
	RemoveGCSFTFinalizer bool
	// Name shows a setting in a skip's why, as the command's flag (exit.Flag); nil shows the
	// setting's own name.
	Name func(fault.Field) string
}

// The settings a skip's why names, for the command to show as its flags.
const (
	SetForce                fault.Field = "force"
	SetStaleWorkers         fault.Field = "stale-workers"
	SetRemoveGCSFTFinalizer fault.Field = "remove-gcs-ft-finalizer"
)

// name is how the command shows the setting f.
func (o Options) name(f fault.Field) string {
	if o.Name == nil {
		return string(f)
	}
	return o.Name(f)
}

// Action is one pod delete. UID and ResourceVersion are what the planner saw: the delete carries
// them as preconditions, so a pod that changed since is left alone.
type Action struct {
	Rule            string       `json:"rule"`
	Cluster         diagnose.Ref `json:"cluster"`
	Pod             diagnose.Ref `json:"pod"`
	ResourceVersion string       `json:"resourceVersion"`
	Node            string       `json:"node,omitempty"`
	// GracePeriodSeconds is nil (the pod's own grace period) or 0 (force, stuck heads only).
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
	Why                string `json:"why"`
	// Summary is the evidence in a few words (the pod's phase, reason and the first sentence of
	// its message): what the plan line and the Events say. Why has all of it.
	Summary string `json:"-"`
}

// Force reports whether the action is a force delete.
func (a Action) Force() bool { return a.GracePeriodSeconds != nil && *a.GracePeriodSeconds == 0 }

// Verb is how the action reads in the plan and in Events.
func (a Action) Verb() string {
	if a.Force() {
		return "force-delete (grace period 0)"
	}
	return "delete"
}

// Skip is a finding heal will not act on, and why.
type Skip struct {
	Rule    string       `json:"rule"`
	Cluster diagnose.Ref `json:"cluster"`
	Object  diagnose.Ref `json:"object"`
	Why     string       `json:"why"`
}

// HealPlan is what heal would do: the deletes, and the head findings it cannot fix.
type HealPlan struct {
	Actions     []Action `json:"actions"`
	NotHealable []Skip   `json:"notHealable"`
	// Accepted are the deletes heal would have planned for findings an accept file accepts;
	// heal leaves them alone unless asked to include them. Filled by the heal command.
	Accepted []Skip `json:"accepted,omitempty"`
	// Stuck counts head-terminating-stuck findings in scope, healable or not: Force with none
	// is a usage error.
	Stuck int `json:"-"`
	// FinalizerRemovals are the Redis cleanup finalizers heal removes (RemoveGCSFTFinalizer).
	FinalizerRemovals []FinalizerRemoval `json:"finalizerRemovals,omitempty"`
	// FinalizersStuck counts gcs-ft-finalizer-stuck findings in scope: the flag with none is a
	// usage error.
	FinalizersStuck int `json:"-"`
}

// Empty reports whether there is nothing to delete or remove.
func (p HealPlan) Empty() bool { return len(p.Actions) == 0 && len(p.FinalizerRemovals) == 0 }

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
func Plan(s *diagnose.Snapshot, findings []diagnose.Finding, opts Options) HealPlan {
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
				skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: diagnose.PodRef(pod), Why: why})
				continue
			}
			if a, why := ix.action(f.Rule, f.Cluster, pod, opts); why != "" {
				skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: diagnose.PodRef(pod), Why: why})
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
	redact := diagnose.Redactor(s)
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
	heads := ix.heads(f.Cluster)
	if f.Object.Kind == "Pod" || f.Object.Kind == "" {
		pod, why := ix.findingPod(f)
		if pod == nil {
			skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: f.Object, Why: why})
			return
		}
		heads = []*corev1.Pod{pod}
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
		obj = diagnose.PodRef(heads[0])
	}
	skip(Skip{Rule: f.Rule, Cluster: f.Cluster, Object: obj, Why: why})
}

// action checks every safety condition for deleting pod under rule and returns the action, or
// why the pod is not healable.
func (ix *index) action(rule string, clusterRef diagnose.Ref, pod *corev1.Pod, opts Options) (Action, string) {
	if why := ix.notOwnedWhy(clusterRef, pod); why != "" {
		return Action{}, why
	}
	a := Action{
		Rule:            rule,
		Cluster:         clusterRef,
		Pod:             diagnose.PodRef(pod),
		ResourceVersion: pod.ResourceVersion,
		Node:            pod.Spec.NodeName,
	}
	if c := ix.cluster(clusterRef, pod); c != nil {
		a.Cluster = diagnose.ClusterRef(c)
	}
	switch {
	case pod.DeletionTimestamp != nil:
		why := ix.stuckWhy(pod, opts)
		if why != "" {
			return Action{}, why
		}
		zero := int64(0)
		a.GracePeriodSeconds = &zero
		a.Summary = fmt.Sprintf("stuck Terminating since %s on node %s, which is %s",
			pod.DeletionTimestamp.UTC().Format(time.RFC3339), pod.Spec.NodeName, ix.nodeState(pod.Spec.NodeName))
		a.Why = a.Summary + "; the operator counts it as the head until it is gone"
	case ray.Terminal(pod):
		a.Summary, a.Why = terminalWhy(pod, "head")
	default:
		return Action{}, fmt.Sprintf("the pod is %s, not terminal; heal never deletes a pod that may be running", phaseOf(pod))
	}
	return a, ""
}

// notOwnedWhy says why pod is not a head heal may touch, or "".
func (ix *index) notOwnedWhy(clusterRef diagnose.Ref, pod *corev1.Pod) string {
	c, why := ix.controller(clusterRef, pod, "head", ray.IsHead)
	if why != "" {
		return why
	}
	// Whatever a finding says, heal never acts on a cluster whose head restart is disabled: the
	// operator would not replace what heal deletes (kuberay #4234).
	if ix.mayNotRestart(c) {
		return restartDisabledWhy("")
	}
	return ""
}

// controller is the RayCluster that controls pod, a Ray pod of the role isRole checks (ray.IsHead,
// ray.IsWorker), when it is one the operator would replace pod for; else why heal must not touch
// pod.
func (ix *index) controller(clusterRef diagnose.Ref, pod *corev1.Pod, role string, isRole func(*corev1.Pod) bool) (*rayv1.RayCluster, string) {
	if !ray.IsRayPod(pod) {
		return nil, "not a Ray pod (no label " + ray.RayPodSelector + ")"
	}
	if !isRole(pod) {
		return nil, "not a Ray " + role + " pod"
	}
	c := ix.cluster(clusterRef, pod)
	if c == nil {
		return nil, "its RayCluster was not found; without it no operator would create a replacement"
	}
	owner := metav1.GetControllerOf(pod)
	if owner == nil || owner.Kind != "RayCluster" || !strings.HasPrefix(owner.APIVersion, "ray.io/") ||
		owner.Name != c.Name || owner.UID != c.UID {
		return nil, fmt.Sprintf("not controlled by RayCluster %s/%s; only the operator's own pods are replaced by it", c.Namespace, c.Name)
	}
	if c.DeletionTimestamp != nil {
		return nil, "its RayCluster is being deleted"
	}
	if ray.Suspended(c) {
		return nil, "its RayCluster is suspended; the operator would not create a new " + role
	}
	return c, ""
}

// mayNotRestart: the operator may create no new head for c. Beyond doctor's HeadRestartDisabled:
// the annotation whatever the version, and a provisioned RayJob cluster when no operator version
// can be read (the watchdog does not read Deployments), since v1.5.x recreates none of those.
// This costs no repair: only versions that write conditions can see a cluster provisioned, and
// they delete terminal heads themselves.
func (ix *index) mayNotRestart(c *rayv1.RayCluster) bool {
	ops := diagnose.FindOperators(ix.s.Deployments)
	if _, off := diagnose.HeadRestartDisabled(c, ops); off || c.Annotations[diagnose.AnnotationDisableProvisionedHeadRestart] == "true" {
		return true
	}
	for _, op := range ops {
		if _, err := version.ParseSemantic(op.Version); err == nil && op.ReadyReplicas > 0 {
			return false
		}
	}
	return c.Labels[diagnose.LabelOriginatedFromCRD] == "RayJob" &&
		meta.IsStatusConditionTrue(c.Status.Conditions, string(rayv1.RayClusterProvisioned))
}

// restartDisabledWhy is heal's refusal on a cluster whose head restart is disabled by design.
func restartDisabledWhy(op string) string {
	if op == "" {
		op = "the operator"
	}
	return "head restart is disabled on this RayCluster by design (" + diagnose.AnnotationDisableProvisionedHeadRestart +
		", or a RayJob's cluster on KubeRay v1.5): " + op + " creates no new head, so heal never acts on it"
}

// operatorReplacesWhy: within the operator's grace a terminal head is the operator's to replace
// (doctor's Facts.OperatorReplacesBy); heal deleting it would only race the operator.
func operatorReplacesWhy(s *diagnose.Snapshot, f diagnose.Finding) string {
	due := f.Facts.OperatorReplacesBy
	if due.IsZero() || !s.Now.Before(due) {
		return ""
	}
	op := f.Facts.Operator
	if op == "" {
		op = "the operator"
	}
	return op + " deletes this head and creates a new one itself; heal leaves it to the operator until " + due.UTC().Format(time.RFC3339) +
		" and acts only if it is still there then"
}

// stuckWhy says why a pod being deleted may not be force-deleted, or "".
func (ix *index) stuckWhy(pod *corev1.Pod, opts Options) string {
	if !ix.s.CanSee("nodes") {
		return fmt.Sprintf("stuck Terminating on node %s, but nodes could not be read, so heal cannot tell whether the node is down", pod.Spec.NodeName)
	}
	state := ix.nodeState(pod.Spec.NodeName)
	switch state {
	case "Ready":
		return fmt.Sprintf("being deleted on node %s, which is Ready: the kubelet will finish the deletion; heal force-deletes only on a NotReady, unreachable or gone node", pod.Spec.NodeName)
	case "unknown":
		return fmt.Sprintf("being deleted on node %s, which reports no Ready condition yet, so nothing shows it is down; heal force-deletes only on a NotReady, unreachable or gone node", pod.Spec.NodeName)
	}
	if !opts.Force {
		return fmt.Sprintf("stuck Terminating on node %s, which is %s; pass %s to force-delete it (grace period 0) once you know the node is down", pod.Spec.NodeName, state, opts.name(SetForce))
	}
	return ""
}

// nodeState is "Ready", "NotReady", "unreachable", "gone", or "unknown" for a node without a
// Ready condition (ray.NodeUnreported: its kubelet never reported), which is not evidence that it
// is down, so heal never force-deletes on it.
func (ix *index) nodeState(name string) string {
	n, ok := ix.nodes[name]
	if name == "" || !ok {
		return "gone"
	}
	switch r := ray.NodeReadiness(n); r {
	case ray.NodeReady:
		return "Ready"
	case ray.NodeUnreported:
		return "unknown"
	default:
		return r
	}
}

// terminalWhy says why a terminal pod of role ("head", "worker") is deleted: in a few words (the
// phase, reason and first sentence of the kubelet's message) and in full.
func terminalWhy(pod *corev1.Pod, role string) (summary, why string) {
	state := "phase " + string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		state += " (" + pod.Status.Reason + ")"
	}
	summary, why = state, state
	// The kubelet's messages are sentences ending in a period; a "; " follows them here.
	if msg := strings.TrimRight(strings.TrimSpace(firstLine(pod.Status.Message)), ". "); msg != "" {
		first, _, _ := strings.Cut(msg, ". ")
		summary += ": " + first
		why += ": " + msg
	}
	return summary, why + "; a terminal pod never runs again, whatever its restartPolicy; deleting it lets the operator create a new " + role
}

func phaseOf(pod *corev1.Pod) string {
	if pod.Status.Phase == "" {
		return "in no phase yet"
	}
	return string(pod.Status.Phase)
}

func refLess(a, b diagnose.Ref) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.UID < b.UID
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// index looks objects up in a snapshot by name.
type index struct {
	s        *diagnose.Snapshot
	clusters map[types.NamespacedName]*rayv1.RayCluster
	pods     map[types.NamespacedName]*corev1.Pod
	nodes    map[string]*corev1.Node
}

func newIndex(s *diagnose.Snapshot) *index {
	ix := &index{
		s:        s,
		clusters: map[types.NamespacedName]*rayv1.RayCluster{},
		pods:     map[types.NamespacedName]*corev1.Pod{},
		nodes:    map[string]*corev1.Node{},
	}
	for i := range s.Clusters {
		c := &s.Clusters[i]
		ix.clusters[types.NamespacedName{Namespace: c.Namespace, Name: c.Name}] = c
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		ix.pods[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = p
	}
	for i := range s.Nodes {
		ix.nodes[s.Nodes[i].Name] = &s.Nodes[i]
	}
	return ix
}

// cluster is the finding's RayCluster, or the one the pod's ray.io/cluster label names.
func (ix *index) cluster(ref diagnose.Ref, pod *corev1.Pod) *rayv1.RayCluster {
	ns, name := ref.Namespace, ref.Name
	if pod != nil {
		if ns == "" {
			ns = pod.Namespace
		}
		if name == "" {
			name = pod.Labels[ray.LabelCluster]
		}
		if ns != pod.Namespace || name != pod.Labels[ray.LabelCluster] {
			return nil // a pod of another cluster is never healed under this finding
		}
	}
	return ix.clusters[types.NamespacedName{Namespace: ns, Name: name}]
}

// findingPod is the pod a finding is about, as the snapshot holds it, or why there is none.
func (ix *index) findingPod(f diagnose.Finding) (*corev1.Pod, string) {
	o := f.Object
	if o.Kind != "" && o.Kind != "Pod" {
		return nil, fmt.Sprintf("the finding names a %s, not a pod", o.Kind)
	}
	ns := o.Namespace
	if ns == "" {
		ns = f.Cluster.Namespace
	}
	pod := ix.pods[types.NamespacedName{Namespace: ns, Name: o.Name}]
	if pod == nil {
		return nil, "the pod is not in the snapshot"
	}
	if o.UID != "" && string(pod.UID) != o.UID {
		return nil, "the pod was replaced since the finding was made"
	}
	return pod, ""
}

// heads are the snapshot's head pods labelled as belonging to the cluster.
func (ix *index) heads(ref diagnose.Ref) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range ix.s.Pods {
		p := &ix.s.Pods[i]
		if p.Namespace == ref.Namespace && p.Labels[ray.LabelCluster] == ref.Name && ray.IsHead(p) {
			out = append(out, p)
		}
	}
	return out
}
