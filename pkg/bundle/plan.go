// Package bundle is `kubectl ray bundle`'s core: what to collect (a Plan from doctor's
// snapshot), how each file of the archive is redacted and rendered, and the archive itself. The
// reads are pkg/kube's (Source); nothing here decides an exit code.
package bundle

import (
	"sort"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Plan is what a bundle holds of a snapshot: the custom resources picked, their pods, the nodes
// those run on, the operator's Deployments, and the container logs to read.
type Plan struct {
	Clusters []*rayv1.RayCluster
	Services []*rayv1.RayService
	Jobs     []*rayv1.RayJob
	CronJobs []*ray.RayCronJob // every RayCronJob when the bundle is of everything, and those that made a picked RayJob
	// Gateways and HTTPRoutes are those KubeRay made for the picked RayServices' incremental upgrades.
	Gateways   []*ray.Gateway
	HTTPRoutes []*ray.HTTPRoute
	Pods       []*corev1.Pod // the Ray pods of Clusters, then the submitter pods of Jobs
	Nodes      []*corev1.Node
	Operators  []*appsv1.Deployment
	// Logs are the container logs to read, one GET each; OperatorLogs says whether the operator's
	// are read too (not with --no-logs).
	Logs         []artifact.LogRequest
	OperatorLogs bool
	// RayLogs are the heads whose Ray log files are read (one exec of tar each, as kubectl cp).
	RayLogs []RayLogRequest
	// Namespaces are where the picked objects live: the extra LISTs (Services, Events, ...) run
	// in each, or cluster-wide when AllNamespaces.
	Namespaces    []string
	AllNamespaces bool

	// What the snapshot already read of the kinds Collect lists again more widely: the serve
	// Services and their slices (label ray.io/serve, which KubeRay's serve Service carries
	// without the cluster's label) and the Redis cleanup Jobs. Collect adds them to its lists.
	known known
}

type known struct {
	services []corev1.Service
	slices   []discoveryv1.EndpointSlice
	jobs     []batchv1.Job
	pdbs     []policyv1.PodDisruptionBudget
	policies []networkingv1.NetworkPolicy
}

// RayLogsDir is where Ray writes its own log files in a pod: the session directory of ray start's
// default --temp-dir (/tmp/ray). They are gone with the pod (kuberay #1047, ray #44561).
const RayLogsDir = "/tmp/ray/session_latest/logs"

// RayLogRequest is one head's Ray log files: its Ray container (KubeRay's first container).
type RayLogRequest struct {
	Namespace, Pod, Container string
}

// Dir is where its files go in the archive.
func (r RayLogRequest) Dir() string { return "ray-logs/" + r.Namespace + "/" + r.Pod }

// HeadRayLogs is the head's Ray log files to read: only a head whose Ray container runs (an exec
// needs a running container).
func HeadRayLogs(pod *corev1.Pod) (RayLogRequest, bool) {
	if !ray.IsHead(pod) || len(pod.Spec.Containers) == 0 || pod.DeletionTimestamp != nil {
		return RayLogRequest{}, false
	}
	c := pod.Spec.Containers[0].Name
	for _, st := range pod.Status.ContainerStatuses {
		if st.Name == c && st.State.Running != nil {
			return RayLogRequest{Namespace: pod.Namespace, Pod: pod.Name, Container: c}, true
		}
	}
	return RayLogRequest{}, false
}

// PlanOptions says what the plan includes beyond the objects.
type PlanOptions struct {
	// Logs: read container logs (--no-logs turns it off).
	Logs bool
	// RayLogs: read the heads' Ray log files too (only with Logs; --no-ray-logs turns it off).
	RayLogs bool
	// AllNamespaces: the snapshot was read with -A.
	AllNamespaces bool
	// Stream, when the snapshot's pods were trimmed, knows which containers each had.
	Stream *Stream
}

// MakePlan picks from s what a bundle of t holds (every RayCluster of s when t is nil): the
// clusters doctor checks for t (diagnose.Checked), the RayServices and RayJobs that own them or
// that t names, their pods, the nodes those pods run on, and the operators.
func MakePlan(s *state.Snapshot, t *diagnose.Target, o PlanOptions) Plan {
	p := Plan{AllNamespaces: o.AllNamespaces}
	checked := diagnose.Checked(s, t)
	picked := map[string]bool{}
	owners := map[string]bool{} // kind/ns/name of the RayServices and RayJobs owning a picked cluster
	for i := range s.Clusters {
		rc := &s.Clusters[i]
		if !checked(rc) {
			continue
		}
		p.Clusters = append(p.Clusters, rc)
		picked[rc.Namespace+"/"+rc.Name] = true
		for _, ref := range rc.OwnerReferences {
			owners[ref.Kind+"/"+rc.Namespace+"/"+ref.Name] = true
		}
	}
	wants := func(kind ray.Kind, ns, name string) bool {
		if owners[string(kind)+"/"+ns+"/"+name] {
			return true
		}
		if t == nil {
			return !s.ClustersSelected
		}
		return (t.Kind == "" || t.Kind == kind) && t.Name == name
	}
	// A RayJob on an existing cluster (clusterSelector) and a RayService's clusters are named
	// in their status, not by an owner reference.
	runsOn := func(ns string, clusters ...string) bool {
		for _, c := range clusters {
			if c != "" && picked[ns+"/"+c] {
				return true
			}
		}
		return false
	}
	for i := range s.Services {
		sv := &s.Services[i]
		if wants(ray.KindRayService, sv.Namespace, sv.Name) ||
			runsOn(sv.Namespace, sv.Status.ActiveServiceStatus.RayClusterName, sv.Status.PendingServiceStatus.RayClusterName) {
			p.Services = append(p.Services, sv)
		}
	}
	jobs := map[string]bool{}
	// A RayCronJob's RayJobs, those whose clusters are gone too.
	cronRun := func(j *rayv1.RayJob) bool {
		run, ok := ray.CronRunOf(j)
		return ok && t != nil && t.Kind == ray.KindRayCronJob && run.CronJob == t.Name
	}
	for i := range s.Jobs {
		if j := &s.Jobs[i]; wants(ray.KindRayJob, j.Namespace, j.Name) || runsOn(j.Namespace, j.Status.RayClusterName) || cronRun(j) {
			p.Jobs = append(p.Jobs, j)
			jobs[j.Namespace+"/"+j.Name] = true
		}
	}
	services := map[string]bool{}
	for _, sv := range p.Services {
		services[sv.Namespace+"/"+ray.GatewayName(sv)] = true
		services[sv.Namespace+"/"+ray.HTTPRouteName(sv)] = true
	}
	for i := range s.Gateways {
		if g := &s.Gateways[i]; services[g.Namespace+"/"+g.Name] {
			p.Gateways = append(p.Gateways, g)
		}
	}
	for i := range s.HTTPRoutes {
		if r := &s.HTTPRoutes[i]; services[r.Namespace+"/"+r.Name] {
			p.HTTPRoutes = append(p.HTTPRoutes, r)
		}
	}
	madeJobs := map[string]bool{}
	for _, j := range p.Jobs {
		if run, ok := ray.CronRunOf(j); ok {
			madeJobs[j.Namespace+"/"+run.CronJob] = true
		}
	}
	for i := range s.CronJobs {
		if c := &s.CronJobs[i]; madeJobs[c.Namespace+"/"+c.Name] || wants(ray.KindRayCronJob, c.Namespace, c.Name) {
			p.CronJobs = append(p.CronJobs, c)
		}
	}
	for i := range s.Pods {
		if pod := &s.Pods[i]; picked[pod.Namespace+"/"+pod.Labels[ray.LabelCluster]] {
			p.Pods = append(p.Pods, pod)
		}
	}
	for i := range s.SubmitterPods {
		// KubeRay names the submitter Job after its RayJob; the Job controller labels its pods.
		if pod := &s.SubmitterPods[i]; jobs[pod.Namespace+"/"+pod.Labels[jobNameLabel]] {
			p.Pods = append(p.Pods, pod)
		}
	}
	onNode := map[string]bool{}
	for _, pod := range p.Pods {
		onNode[pod.Spec.NodeName] = true
	}
	for i := range s.Nodes {
		if onNode[s.Nodes[i].Name] {
			p.Nodes = append(p.Nodes, &s.Nodes[i])
		}
	}
	for _, op := range ray.FindOperators(s.Deployments) {
		for i := range s.Deployments {
			if d := &s.Deployments[i]; d.Namespace == op.Namespace && d.Name == op.Name {
				p.Operators = append(p.Operators, d)
			}
		}
	}
	p.OperatorLogs = o.Logs
	logsOf := artifact.PodLogs
	if o.Stream != nil {
		logsOf = o.Stream.podLogs
	}
	if o.Logs {
		for _, pod := range p.Pods {
			p.Logs = append(p.Logs, logsOf(pod)...)
			if r, ok := HeadRayLogs(pod); ok && o.RayLogs {
				p.RayLogs = append(p.RayLogs, r)
			}
		}
	}
	p.Namespaces = namespacesOf(p)
	p.known = known{services: s.Serve, slices: s.ServeEndpoints, jobs: s.CleanupJobs, pdbs: s.PDBs, policies: s.NetworkPolicies}
	return p
}

// jobNameLabel is the Job controller's label on a Job's pods.
const jobNameLabel = "batch.kubernetes.io/job-name"

func namespacesOf(p Plan) []string {
	seen := map[string]bool{}
	for _, rc := range p.Clusters {
		seen[rc.Namespace] = true
	}
	for _, sv := range p.Services {
		seen[sv.Namespace] = true
	}
	for _, j := range p.Jobs {
		seen[j.Namespace] = true
	}
	for _, c := range p.CronJobs {
		seen[c.Namespace] = true
	}
	out := make([]string, 0, len(seen))
	for ns := range seen {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

// Names are the names of the picked clusters, RayServices and RayJobs: the operator's log is cut
// to the lines that name one of them.
func (p Plan) Names() []string {
	var out []string
	for _, rc := range p.Clusters {
		out = append(out, rc.Name)
	}
	for _, sv := range p.Services {
		out = append(out, sv.Name)
	}
	for _, j := range p.Jobs {
		out = append(out, j.Name)
	}
	sort.Strings(out)
	return out
}
