package bundle

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// What the extra LISTs return is more than the bundle's: a namespace's other clusters, Jobs that
// are not a RayJob's, PodDisruptionBudgets and NetworkPolicies of other pods, Events about anything. These pure
// filters keep what belongs to the plan.

// picked is the plan's objects by UID and its clusters by namespace/name.
type picked struct {
	uids     map[types.UID]bool
	clusters map[string]bool
}

func pickedOf(p Plan) picked {
	k := picked{uids: map[types.UID]bool{}, clusters: map[string]bool{}}
	defer delete(k.uids, "")
	for _, rc := range p.Clusters {
		k.uids[rc.UID] = true
		k.clusters[rc.Namespace+"/"+rc.Name] = true
	}
	for _, sv := range p.Services {
		k.uids[sv.UID] = true
	}
	for _, j := range p.Jobs {
		k.uids[j.UID] = true
	}
	return k
}

func (k picked) owns(m *metav1.ObjectMeta) bool {
	for _, ref := range m.OwnerReferences {
		if k.uids[ref.UID] {
			return true
		}
	}
	return k.clusters[m.Namespace+"/"+m.Labels[ray.LabelCluster]]
}

// keepServices keeps the Services of the picked clusters (their label) and those the picked
// RayServices own (the serve Service).
func keepServices(p Plan, all []corev1.Service) []corev1.Service {
	k := pickedOf(p)
	var out []corev1.Service
	seen := map[string]bool{}
	for i := range all {
		if s := &all[i]; k.owns(&s.ObjectMeta) && !seen[s.Namespace+"/"+s.Name] {
			seen[s.Namespace+"/"+s.Name] = true
			out = append(out, *s)
		}
	}
	return out
}

// keepSlices keeps the EndpointSlices of services (the EndpointSlice controller's label names
// the Service).
func keepSlices(services []corev1.Service, all []discoveryv1.EndpointSlice) []discoveryv1.EndpointSlice {
	of := map[string]bool{}
	for _, s := range services {
		of[s.Namespace+"/"+s.Name] = true
	}
	var out []discoveryv1.EndpointSlice
	seen := map[string]bool{}
	for i := range all {
		e := &all[i]
		if of[e.Namespace+"/"+e.Labels[discoveryv1.LabelServiceName]] && !seen[e.Namespace+"/"+e.Name] {
			seen[e.Namespace+"/"+e.Name] = true
			out = append(out, *e)
		}
	}
	return out
}

// keepJobs keeps the Jobs the picked RayJobs own (submitters) and those of the picked clusters
// (Redis cleanup).
func keepJobs(p Plan, all []batchv1.Job) []batchv1.Job {
	k := pickedOf(p)
	var out []batchv1.Job
	seen := map[string]bool{}
	for i := range all {
		if j := &all[i]; k.owns(&j.ObjectMeta) && !seen[j.Namespace+"/"+j.Name] {
			seen[j.Namespace+"/"+j.Name] = true
			out = append(out, *j)
		}
	}
	return out
}

// keepPDBs keeps the PodDisruptionBudgets whose selector matches one of the plan's pods.
func keepPDBs(p Plan, all []policyv1.PodDisruptionBudget) []policyv1.PodDisruptionBudget {
	var out []policyv1.PodDisruptionBudget
	for i := range all {
		b := &all[i]
		if sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector); err == nil && !sel.Empty() && selectsPlanPod(p, b.Namespace, sel) {
			out = append(out, *b)
		}
	}
	return out
}

// keepNetworkPolicies keeps the NetworkPolicies that select one of the plan's pods (an empty
// selector selects every pod of its namespace).
func keepNetworkPolicies(p Plan, all []networkingv1.NetworkPolicy) []networkingv1.NetworkPolicy {
	var out []networkingv1.NetworkPolicy
	for i := range all {
		np := &all[i]
		if sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector); err == nil && selectsPlanPod(p, np.Namespace, sel) {
			out = append(out, *np)
		}
	}
	return out
}

// selectsPlanPod says whether sel, in namespace, selects one of the plan's pods.
func selectsPlanPod(p Plan, namespace string, sel labels.Selector) bool {
	for _, pod := range p.Pods {
		if pod.Namespace == namespace && sel.Matches(labels.Set(pod.Labels)) {
			return true
		}
	}
	return false
}

// eventSubjects says whether an Event is about one of the bundle's objects: by UID, or by kind,
// namespace and name for an Event that carries no UID.
func eventSubjects(p Plan, c Collected) func(*corev1.Event) bool {
	uids := map[types.UID]bool{}
	names := map[string]bool{}
	add := func(kind string, m *metav1.ObjectMeta) {
		if m.UID != "" {
			uids[m.UID] = true
		}
		names[kind+"/"+m.Namespace+"/"+m.Name] = true
	}
	for _, o := range p.Clusters {
		add("RayCluster", &o.ObjectMeta)
	}
	for _, o := range p.Services {
		add("RayService", &o.ObjectMeta)
	}
	for _, o := range p.Jobs {
		add("RayJob", &o.ObjectMeta)
	}
	for _, o := range p.Pods {
		add("Pod", &o.ObjectMeta)
	}
	for i := range c.Services {
		add("Service", &c.Services[i].ObjectMeta)
	}
	for i := range c.Jobs {
		add("Job", &c.Jobs[i].ObjectMeta)
	}
	for i := range c.PDBs {
		add("PodDisruptionBudget", &c.PDBs[i].ObjectMeta)
	}
	for i := range c.NetworkPolicies {
		add("NetworkPolicy", &c.NetworkPolicies[i].ObjectMeta)
	}
	return func(e *corev1.Event) bool {
		o := e.InvolvedObject
		if o.UID != "" && uids[o.UID] {
			return true
		}
		return names[o.Kind+"/"+o.Namespace+"/"+o.Name]
	}
}
