package diagnose

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	schedhelper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// existingOf is the object of a's that c's document would change: the RayCluster of its name, or
// the RayService or RayJob that owns it; nil when it is new.
func existingOf(a *state.Admission, c *clusterView) *state.Existing {
	kind, name := "RayCluster", c.rc.Name
	if c.owner != nil {
		kind, name = c.owner.Kind, c.owner.Name
	}
	for i := range a.Existing {
		if e := &a.Existing[i]; e.Kind == kind && e.Namespace == c.rc.Namespace && e.Name == name {
			return e
		}
	}
	return nil
}

// The autoscaler sidecar KubeRay adds to the head with in-tree autoscaling: 500m CPU and 512Mi,
// both requests and limits, unless autoscalerOptions.resources replaces them
// (BuildAutoscalerContainer and mergeAutoscalerOverrides in ray-operator/controllers/ray/common/
// pod.go, the same in v1.1.1, v1.5.0 and v1.6.0).
var autoscalerResources = corev1.ResourceRequirements{
	Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
	Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
}

// headPodOf is the head pod KubeRay would create from rc, as admission and the scheduler see it:
// the template's containers and init containers, the autoscaler sidecar, and the API server's
// defaulting of a container's requests to its limits.
func headPodOf(rc *rayv1.RayCluster) *corev1.Pod {
	tmpl := rc.Spec.HeadGroupSpec.Template.DeepCopy()
	p := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	p.Namespace = rc.Namespace
	if rc.Spec.EnableInTreeAutoscaling != nil && *rc.Spec.EnableInTreeAutoscaling {
		res := *autoscalerResources.DeepCopy()
		if o := rc.Spec.AutoscalerOptions; o != nil && o.Resources != nil {
			res = *o.Resources.DeepCopy()
		}
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "autoscaler", Resources: res})
	}
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			defaultRequestsToLimits(&cs[i].Resources)
		}
	}
	return p
}

// waitGCSReadyResources are those of the init container KubeRay injects into every worker pod,
// wait-gcs-ready: 200m CPU and 256Mi, requests and limits (pod.go's DefaultWorkerPodTemplate,
// the same in v1.1.1, v1.5.0 and v1.6.0, unless the operator runs with
// ENABLE_INIT_CONTAINER_INJECTION=false).
var waitGCSReadyResources = corev1.ResourceRequirements{
	Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
	Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
}

// workerPodOf is a worker pod KubeRay would create for group g of rc, as admission sees it: the
// template's containers and init containers, wait-gcs-ready, and the requests defaulted to limits.
func workerPodOf(rc *rayv1.RayCluster, g *rayv1.WorkerGroupSpec) *corev1.Pod {
	tmpl := g.Template.DeepCopy()
	p := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	p.Namespace = rc.Namespace
	p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "wait-gcs-ready", Resources: *waitGCSReadyResources.DeepCopy()})
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			defaultRequestsToLimits(&cs[i].Resources)
		}
	}
	return p
}

// desiredWorkers is how many pods KubeRay creates for g when the cluster starts
// (GetWorkerGroupDesiredReplicas in controllers/ray/utils/util.go and reconcilePods): replicas
// within minReplicas and maxReplicas (maxReplicas when they cross), the CRD's defaults (0, 0 and
// 2147483647) for what the document leaves out, times numOfHosts; none for a suspended group.
func desiredWorkers(g *rayv1.WorkerGroupSpec) int32 {
	if g.Suspend != nil && *g.Suspend {
		return 0
	}
	var replicas, min, max int32 = 0, 0, math.MaxInt32
	if g.Replicas != nil {
		replicas = *g.Replicas
	}
	if g.MinReplicas != nil {
		min = *g.MinReplicas
	}
	if g.MaxReplicas != nil {
		max = *g.MaxReplicas
	}
	n := replicas
	switch {
	case min > max:
		n = max
	case replicas < min:
		n = min
	case replicas > max:
		n = max
	}
	return n * int32(math.Max(1, float64(g.NumOfHosts)))
}

// defaultRequestsToLimits is the API server's defaulting: a resource with a limit and no request
// requests its limit.
func defaultRequestsToLimits(r *corev1.ResourceRequirements) {
	for name, lim := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			if r.Requests == nil {
				r.Requests = corev1.ResourceList{}
			}
			r.Requests[name] = lim.DeepCopy()
		}
	}
}

// limitRangeDefaults applies the namespace's LimitRanges of type Container to p as the
// LimitRanger admission plugin does: a missing limit gets the default, a missing request the
// defaultRequest (which defaults to the default limit).
func limitRangeDefaults(p *corev1.Pod, ranges []corev1.LimitRange) {
	forContainerLimits(p, ranges, func(_ string, item corev1.LimitRangeItem, c *corev1.Container) {
		r := &c.Resources
		for name, q := range item.Default {
			if _, ok := r.Limits[name]; !ok {
				if r.Limits == nil {
					r.Limits = corev1.ResourceList{}
				}
				r.Limits[name] = q.DeepCopy()
			}
		}
		req := item.DefaultRequest.DeepCopy()
		for name, q := range item.Default {
			if _, ok := req[name]; !ok {
				if req == nil {
					req = corev1.ResourceList{}
				}
				req[name] = q.DeepCopy()
			}
		}
		for name, q := range req {
			if _, ok := r.Requests[name]; !ok {
				if r.Requests == nil {
					r.Requests = corev1.ResourceList{}
				}
				r.Requests[name] = q.DeepCopy()
			}
		}
	})
}

// forContainerLimits calls fn with each item of type Container of the LimitRanges in p's
// namespace and each of p's init containers and containers, as the LimitRanger visits them.
func forContainerLimits(p *corev1.Pod, ranges []corev1.LimitRange, fn func(rangeName string, item corev1.LimitRangeItem, c *corev1.Container)) {
	for _, lr := range ranges {
		if lr.Namespace != p.Namespace {
			continue
		}
		for _, item := range lr.Spec.Limits {
			if item.Type != corev1.LimitTypeContainer {
				continue
			}
			for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
				for i := range cs {
					fn(lr.Name, item, &cs[i])
				}
			}
		}
	}
}

// limitRangeRefusals are the reasons the namespace's LimitRanges of type Container refuse p's
// containers: a request or limit below min, a limit above max, in the LimitRanger's words.
func limitRangeRefusals(p *corev1.Pod, ranges []corev1.LimitRange) []string {
	var out []string
	forContainerLimits(p, ranges, func(rangeName string, item corev1.LimitRangeItem, c *corev1.Container) {
		for _, name := range sortedNames(item.Max) {
			max := item.Max[name]
			if lim, ok := c.Resources.Limits[name]; ok && lim.Cmp(max) > 0 {
				out = append(out, fmt.Sprintf("LimitRange %s: maximum %s usage per Container is %s, but container %s's limit is %s", rangeName, name, max.String(), c.Name, lim.String()))
			}
		}
		for _, name := range sortedNames(item.Min) {
			min := item.Min[name]
			if req, ok := c.Resources.Requests[name]; ok && req.Cmp(min) < 0 {
				out = append(out, fmt.Sprintf("LimitRange %s: minimum %s usage per Container is %s, but container %s requests %s", rangeName, name, min.String(), c.Name, req.String()))
			}
		}
	})
	return out
}

// quotaLedger is what the pods admitted so far in one prediction add to each quota's
// status.used, by quota name: KubeRay creates a cluster's pods one at a time, and each admitted
// pod counts against the next (the quota admission plugin updates the usage as it admits).
type quotaLedger map[string]corev1.ResourceList

// quotaJudges says whether the quota admission of p is predicted against q: a quota of p's namespace
// with no scopes or scope selector (those count only some pods: priority classes, terminating or
// not, BestEffort or not).
func quotaJudges(q *corev1.ResourceQuota, p *corev1.Pod) bool {
	return q.Namespace == p.Namespace && len(q.Spec.Scopes) == 0 && q.Spec.ScopeSelector == nil
}

// charge adds what p counts against each quota to the ledger: p was admitted.
func (l quotaLedger) charge(p *corev1.Pod, quotas []corev1.ResourceQuota) {
	requests := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	limits := resourcehelper.PodLimits(p, resourcehelper.PodResourcesOptions{})
	for i := range quotas {
		q := &quotas[i]
		if !quotaJudges(q, p) {
			continue
		}
		for name := range q.Spec.Hard {
			asked, ok := quotaUsage(name, requests, limits)
			if !ok {
				continue
			}
			if l[q.Name] == nil {
				l[q.Name] = corev1.ResourceList{}
			}
			sum := l[q.Name][name]
			sum.Add(asked)
			l[q.Name][name] = sum
		}
	}
}

// quotaRefusals are the reasons the namespace's ResourceQuotas refuse p, in the quota admission
// plugin's words: a compute resource the quota tracks that a container does not set ("must
// specify"), or more than the quota has left (hard minus status.used, minus what the ledger's
// pods were charged, nil for none). Quotas with scopes are not judged.
func quotaRefusals(p *corev1.Pod, quotas []corev1.ResourceQuota, ledger quotaLedger) []string {
	requests := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	limits := resourcehelper.PodLimits(p, resourcehelper.PodResourcesOptions{})
	var out []string
	for _, q := range quotas {
		if !quotaJudges(&q, p) {
			continue
		}
		var missing []string
		for _, name := range sortedNames(q.Spec.Hard) {
			if field, ok := mustSpecify[name]; ok {
				var lacking []string
				for _, c := range p.Spec.Containers {
					list := c.Resources.Requests
					if field.limit {
						list = c.Resources.Limits
					}
					if _, ok := list[field.resource]; !ok {
						lacking = append(lacking, c.Name)
					}
				}
				if len(lacking) > 0 {
					missing = append(missing, fmt.Sprintf("%s for: %s", name, strings.Join(lacking, ",")))
				}
			}
		}
		if len(missing) > 0 {
			out = append(out, fmt.Sprintf("failed quota: %s: must specify %s", q.Name, strings.Join(missing, "; ")))
			continue
		}
		for _, name := range sortedNames(q.Spec.Hard) {
			asked, ok := quotaUsage(name, requests, limits)
			if !ok {
				continue
			}
			hard := q.Spec.Hard[name]
			used := q.Status.Used[name].DeepCopy()
			used.Add(ledger[q.Name][name])
			left := hard.DeepCopy()
			left.Sub(used)
			if asked.Cmp(left) > 0 {
				out = append(out, fmt.Sprintf("exceeded quota: %s, requested: %s=%s, used: %s=%s, limited: %s=%s", q.Name, name, asked.String(), name, used.String(), name, hard.String()))
			}
		}
	}
	return out
}

// mustSpecify are the quota's compute resources every container must set (the pod evaluator's
// constraints in k8s.io/apiserver's quota): plain cpu and memory count requests.
var mustSpecify = map[corev1.ResourceName]struct {
	resource corev1.ResourceName
	limit    bool
}{
	corev1.ResourceCPU:            {corev1.ResourceCPU, false},
	corev1.ResourceMemory:         {corev1.ResourceMemory, false},
	corev1.ResourceRequestsCPU:    {corev1.ResourceCPU, false},
	corev1.ResourceRequestsMemory: {corev1.ResourceMemory, false},
	corev1.ResourceLimitsCPU:      {corev1.ResourceCPU, true},
	corev1.ResourceLimitsMemory:   {corev1.ResourceMemory, true},
}

// quotaUsage is what one pod counts against a quota's resource name; false for a name it does
// not judge (object counts other than pods, storage of claims).
func quotaUsage(name corev1.ResourceName, requests, limits corev1.ResourceList) (resource.Quantity, bool) {
	s := string(name)
	switch {
	case name == corev1.ResourcePods || s == "count/pods":
		return *resource.NewQuantity(1, resource.DecimalSI), true
	case name == corev1.ResourceCPU || name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage:
		return requests[name], true
	case strings.HasPrefix(s, "requests."):
		return requests[corev1.ResourceName(strings.TrimPrefix(s, "requests."))], true
	case strings.HasPrefix(s, "limits."):
		return limits[corev1.ResourceName(strings.TrimPrefix(s, "limits."))], true
	}
	return resource.Quantity{}, false
}

// nodeFit says whether some node could hold p, and when none can, why, counted by reason as the
// scheduler words it ("0/3 nodes are available: 1 node(s) had untolerated taint {...}, 2
// Insufficient memory."). It judges allocatable, not what other pods use now: a node that could
// hold p once others leave counts as fitting. Preferred affinity and topology spread, which never
// make a pod unschedulable alone or need the other pods, are not judged.
func nodeFit(p *corev1.Pod, nodes []corev1.Node) (bool, string) {
	requests := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	required := nodeaffinity.GetRequiredNodeAffinity(p)
	reasons := map[string]int{}
	for i := range nodes {
		n := &nodes[i]
		taints := n.Spec.Taints
		if n.Spec.Unschedulable {
			taints = append(append([]corev1.Taint(nil), taints...), corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
		}
		// A toleration with operator Lt or Gt exists only where the API server's
		// TaintTolerationComparisonOperators gate let it in, so it is judged as that gate judges it.
		// The logger would only report a value that is no integer, which the toleration then
		// does not tolerate anyway: nothing for doctor's output.
		if t, untolerated := schedhelper.FindMatchingUntoleratedTaint(logr.Discard(), taints, p.Spec.Tolerations, func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}, true); untolerated {
			reasons[fmt.Sprintf("node(s) had untolerated taint {%s: %s}", t.Key, t.Value)]++
			continue
		}
		if ok, err := required.Match(n); err != nil || !ok {
			reasons["node(s) didn't match Pod's node affinity/selector"]++
			continue
		}
		var short []string
		for _, name := range sortedNames(requests) {
			want := requests[name]
			if want.IsZero() {
				continue
			}
			if have := n.Status.Allocatable[name]; have.Cmp(want) < 0 {
				short = append(short, string(name))
			}
		}
		if len(short) > 0 {
			for _, s := range short {
				reasons["Insufficient "+s]++
			}
			continue
		}
		return true, ""
	}
	var parts []string
	for r, n := range reasons {
		parts = append(parts, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(parts)
	msg := fmt.Sprintf("0/%d nodes are available", len(nodes))
	if len(parts) > 0 {
		msg += ": " + strings.Join(parts, ", ")
	}
	return false, msg
}

// podAsks is a pod's requests in one line, "cpu=1, memory=2Gi".
func podAsks(p *corev1.Pod) string {
	requests := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	var parts []string
	for _, name := range sortedNames(requests) {
		q := requests[name]
		parts = append(parts, fmt.Sprintf("%s=%s", name, q.String()))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}
