package bundle

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
	"github.com/kubectl-ray/kubectl-ray/pkg/version"
)

// Contents is everything a bundle writes: its files (the index comes first, when the archive is
// written) and what could not be collected.
type Contents struct {
	Files []artifact.File
	// Spooled are the files the Stream rendered while the snapshot was read, compressed; the
	// text pass read them then, so the archive's writer only redacts and writes them.
	Spooled []Spooled
	Gaps    []artifact.Gap
	// Found are the secrets the structural pass redacted, for the text pass (state.Redactor(s, Found)).
	Found redact.Set
}

// Spooled is a file the Stream rendered: what the index says of it and its bytes, compressed.
type Spooled struct {
	Path, About string
	packed      packed
}

// What the index says of the files the Stream renders.
const (
	clusterAbout = "RayCluster with its status"
	nodeAbout    = "Node running Ray pods: conditions, taints, allocatable"
	jobAbout     = "Job"
)

func nodePath(name string) string { return "nodes/" + name + ".json" }

// Render turns the plan and what Collect read into the bundle's files, every object redacted
// by its structure (redact.Object). The RayClusters, pods, nodes and Redis cleanup Jobs come
// from st as it rendered them whole (a nil st: rendered here from the snapshot, which then holds
// them whole). The text pass comes when the archive is written.
func Render(s *state.Snapshot, p Plan, c Collected, st *Stream) Contents {
	r := renderer{found: redact.Set{}, stream: st}
	for _, o := range p.Clusters {
		r.object(nsPath(o.Namespace, "rayclusters", o.Name), clusterAbout, "ray.io/v1", "RayCluster", o)
	}
	for _, o := range p.Services {
		r.object(nsPath(o.Namespace, "rayservices", o.Name), "RayService with its status", "ray.io/v1", "RayService", o)
	}
	for _, o := range p.Jobs {
		r.rayJob(o, s.JobsNewer[o.Namespace+"/"+o.Name])
	}
	for _, o := range p.Gateways {
		r.served(nsPath(o.Namespace, "gateways", o.Name), "Gateway KubeRay made for a RayService's incremental upgrade", "gateway.networking.k8s.io/v1", "Gateway", o.Served, o)
	}
	for _, o := range p.HTTPRoutes {
		r.served(nsPath(o.Namespace, "httproutes", o.Name), "HTTPRoute KubeRay made for a RayService's incremental upgrade", "gateway.networking.k8s.io/v1", "HTTPRoute", o.Served, o)
	}
	for _, o := range p.CronJobs {
		r.object(nsPath(o.Namespace, "raycronjobs", o.Name), "RayCronJob with its status", "ray.io/v1", ray.KindRayCronJob, o)
	}
	for _, o := range p.Pods {
		r.object(nsPath(o.Namespace, "pods", o.Name), podAbout(o), "v1", "Pod", o)
	}
	for i := range c.Services {
		o := &c.Services[i]
		r.object(nsPath(o.Namespace, "services", o.Name), "Service", "v1", "Service", o)
	}
	for i := range c.EndpointSlices {
		o := &c.EndpointSlices[i]
		r.object(nsPath(o.Namespace, "endpointslices", o.Name), "EndpointSlice of Service "+o.Labels["kubernetes.io/service-name"], "discovery.k8s.io/v1", "EndpointSlice", o)
	}
	for i := range c.Jobs {
		o := &c.Jobs[i]
		r.object(nsPath(o.Namespace, "jobs", o.Name), jobAbout, "batch/v1", "Job", o)
	}
	for i := range c.PDBs {
		o := &c.PDBs[i]
		r.object(nsPath(o.Namespace, "poddisruptionbudgets", o.Name), "PodDisruptionBudget covering Ray pods", "policy/v1", "PodDisruptionBudget", o)
	}
	for i := range c.NetworkPolicies {
		o := &c.NetworkPolicies[i]
		r.object(nsPath(o.Namespace, "networkpolicies", o.Name), "NetworkPolicy selecting Ray pods", "networking.k8s.io/v1", "NetworkPolicy", o)
	}
	r.events(c.Events)
	for _, n := range p.Nodes {
		r.object(nodePath(n.Name), nodeAbout, "v1", "Node", nodeView(n))
	}
	for _, d := range p.Operators {
		r.object("operator/"+d.Namespace+"/deployment-"+d.Name+".json", "the KubeRay operator's Deployment", "apps/v1", "Deployment", d)
	}
	for _, l := range sortedLogs(c.OperatorLogs) {
		r.add(artifact.File{Path: operatorLogPath(l),
			About: "the operator's log, only the lines naming " + strings.Join(p.Names(), ", "), Data: c.OperatorLogs[l]})
	}
	for _, l := range sortedLogs(c.Logs) {
		about := "log of container " + l.Container
		if l.Init {
			about = "log of init container " + l.Container
		}
		if l.Previous {
			about += ", its previous instance (it restarted)"
		}
		r.add(artifact.File{Path: l.Path(), About: about, Data: c.Logs[l]})
	}
	for _, req := range sortedRayLogs(c.RayLogs) {
		for _, f := range c.RayLogs[req] {
			about := "Ray's log file " + f.Name + " from the head's " + RayLogsDir
			if f.Cut != "" {
				about += ": " + f.Cut
			}
			r.add(artifact.File{Path: req.Dir() + "/" + f.Name, About: about, Data: f.Data})
		}
	}
	for i := range s.Ray {
		for _, f := range dashboardFiles(&s.Ray[i], r.found) {
			r.add(f)
		}
	}
	r.add(versionsFile(s, p, c))
	gaps := append(append([]artifact.Gap(nil), c.Gaps...), r.gaps...)
	for _, g := range s.Blind {
		gaps = append(gaps, artifact.Gap{What: "doctor's snapshot: " + g.Resource, Reason: g.Reason})
	}
	return Contents{Files: r.files, Spooled: r.spooled, Gaps: gaps, Found: r.found}
}

func operatorLogPath(l artifact.LogRequest) string {
	return "operator/" + l.Namespace + "/" + l.Pod + "/" + l.Container + ".log"
}

func podAbout(p *corev1.Pod) string {
	switch {
	case ray.IsHead(p):
		return "Pod: the head of RayCluster " + p.Labels[ray.LabelCluster]
	case ray.IsWorker(p):
		return "Pod: a worker of RayCluster " + p.Labels[ray.LabelCluster]
	}
	return "Pod: a RayJob's submitter"
}

func nsPath(ns, kind, name string) string {
	return "namespaces/" + ns + "/" + kind + "/" + name + ".json"
}

type renderer struct {
	files   []artifact.File
	spooled []Spooled
	gaps    []artifact.Gap
	found   redact.Set
	stream  *Stream
}

// add adds f, or the file the stream kept under its path.
func (r *renderer) add(f artifact.File) {
	if r.kept(f.Path, f.About) {
		return
	}
	r.files = append(r.files, f)
}

// kept adds the file the stream rendered or kept under path, when it did.
func (r *renderer) kept(path, about string) bool {
	f, ok := r.stream.take(path)
	if ok {
		r.spooled = append(r.spooled, Spooled{Path: path, About: about, packed: f.packed})
		r.redactedWhole(path, f.problems)
	}
	return ok
}

// object writes obj as JSON, with its kind, without the field managers' bookkeeping, redacted by
// its structure; or takes the file the stream rendered of it whole.
func (r *renderer) object(path, about, apiVersion, kind string, obj any) {
	if r.kept(path, about) {
		return
	}
	data, problems := artifact.ObjectJSON(apiVersion, kind, obj, r.found)
	r.add(artifact.File{Path: path, About: about, Data: data})
	r.redactedWhole(path, problems)
}

// served writes an object from its JSON as the API server served it, redacted by its structure;
// from obj, what the plugin read of it, when it has none (client fakes serve no JSON).
func (r *renderer) served(path, about, apiVersion, kind string, raw []byte, obj any) {
	if len(raw) == 0 {
		r.object(path, about, apiVersion, kind, obj)
		return
	}
	data, problems := artifact.JSONObject(apiVersion, kind, raw, r.found)
	r.add(artifact.File{Path: path, About: about, Data: data})
	r.redactedWhole(path, problems)
}

// rayJob writes o as object does: as the stream rendered it from its JSON as served, or else
// with the fields newer KubeRay releases wrote of it (n), which its type drops, put back where
// the API wrote them. doctor --from reads them again.
func (r *renderer) rayJob(o *rayv1.RayJob, n ray.RayJobNewer) {
	path, about := nsPath(o.Namespace, "rayjobs", o.Name), "RayJob with its status"
	if r.kept(path, about) {
		return
	}
	if n.IsZero() {
		r.object(path, about, "ray.io/v1", "RayJob", o)
		return
	}
	var m map[string]any
	raw, err := json.Marshal(o)
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	if err == nil {
		ray.MergeRayJobNewer(m, n)
		raw, err = json.Marshal(m)
	}
	if err != nil {
		r.object(path, about, "ray.io/v1", "RayJob", o)
		return
	}
	data, problems := artifact.JSONObject("ray.io/v1", "RayJob", raw, r.found)
	r.add(artifact.File{Path: path, About: about, Data: data})
	r.redactedWhole(path, problems)
}

// redactedWhole lists in the index each field of a file the redactor could not read by its
// structure and so wrote as [redacted].
func (r *renderer) redactedWhole(path string, problems []redact.Problem) {
	for _, p := range problems {
		r.gaps = append(r.gaps, artifact.Gap{What: path + ": field " + p.Field + " redacted whole", Reason: p.Reason})
	}
}

// nodeView is what a bundle keeps of a node: what says whether it can run Ray pods (conditions,
// taints, allocatable, capacity) and what it is (labels, kubelet and runtime versions), not its
// image list.
func nodeView(n *corev1.Node) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, UID: n.UID, CreationTimestamp: n.CreationTimestamp},
		Spec:       corev1.NodeSpec{Taints: n.Spec.Taints, Unschedulable: n.Spec.Unschedulable, ProviderID: n.Spec.ProviderID},
		Status: corev1.NodeStatus{Conditions: n.Status.Conditions, Allocatable: n.Status.Allocatable, Capacity: n.Status.Capacity,
			NodeInfo: n.Status.NodeInfo},
	}
}

// events writes, per namespace, the Events as a List (JSON) and as the table kubectl get events
// prints, oldest first.
func (r *renderer) events(all []corev1.Event) {
	byNS := map[string][]corev1.Event{}
	var nss []string
	for _, e := range all {
		if _, ok := byNS[e.Namespace]; !ok {
			nss = append(nss, e.Namespace)
		}
		byNS[e.Namespace] = append(byNS[e.Namespace], e)
	}
	sort.Strings(nss)
	for _, ns := range nss {
		es := byNS[ns]
		items := make([]any, len(es))
		for i := range es {
			items[i] = es[i]
		}
		list := map[string]any{"items": items}
		data, problems := artifact.ObjectJSON("v1", "List", list, r.found)
		r.add(artifact.File{Path: "namespaces/" + ns + "/events.json", About: fmt.Sprintf("%d Events about the objects above", len(es)), Data: data})
		r.redactedWhole("namespaces/"+ns+"/events.json", problems)
		r.add(artifact.File{Path: "namespaces/" + ns + "/events.txt", About: "the same Events as a table, oldest first", Data: artifact.EventTable(es)})
	}
}

func sortedLogs(m map[artifact.LogRequest][]byte) []artifact.LogRequest {
	out := make([]artifact.LogRequest, 0, len(m))
	for l := range m {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path() < out[j].Path() })
	return out
}

func sortedRayLogs(m map[RayLogRequest][]RayLogFile) []RayLogRequest {
	out := make([]RayLogRequest, 0, len(m))
	for r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir() < out[j].Dir() })
	return out
}

// Versions is versions.yaml.
type Versions struct {
	Client    ClientVersion  `json:"client"`
	Server    string         `json:"server,omitempty"`
	Operators []ray.Operator `json:"operators"`
	CRDs      CRDVersions    `json:"crds"`
	// GatewayAPI is "absent" when doctor's LIST found no Gateway API (state.Snapshot.NoGatewayAPI).
	GatewayAPI string `json:"gatewayAPI,omitempty"`
}

// ClientVersion is this binary's.
type ClientVersion struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
}

// CRDVersions is what the API serves of ray.io, as discovery says it (the installed CRDs).
type CRDVersions struct {
	GroupVersions []string            `json:"groupVersions"`
	Resources     map[string][]string `json:"resources,omitempty"`
}

func versionsFile(s *state.Snapshot, p Plan, c Collected) artifact.File {
	v := Versions{Client: ClientVersion{Version: version.Version, Commit: version.Commit}, Server: c.Versions.Server,
		Operators: ray.FindOperators(s.Deployments), CRDs: CRDVersions{GroupVersions: c.Versions.RayVersions, Resources: c.Versions.RayResources}}
	if v.Operators == nil {
		v.Operators = []ray.Operator{}
	}
	if s.NoGatewayAPI {
		v.GatewayAPI = "absent"
	}
	if v.CRDs.GroupVersions == nil {
		v.CRDs.GroupVersions = []string{}
	}
	data, _ := yaml.Marshal(v)
	return artifact.File{Path: "versions.yaml", About: "versions: this client, the API server, the operator, the ray.io CRDs", Data: data}
}
