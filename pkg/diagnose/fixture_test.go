package diagnose

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/rayapi"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// fixtureNow is the snapshot time of every fixture.
var fixtureNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// fixture is a snapshot built from testdata/healthy.yaml with a rule fixture laid over it:
// objects in the overlay replace base objects of the same kind, namespace and name, and
// directives in comments change the rest:
//
//	# want: <severity> <rule>     a finding the fixture must produce (all of them, in any order)
//	# delete: <Kind> <ns>/<name>  remove a base object
//	# blind: <resource>           the loader could not read this resource: its objects are dropped
//	# checks: spec                the rules of scope "spec" count too (see specChecked)
//	# checks: admission           checked as doctor -f against a cluster: Snapshot.Admission is
//	                              set (ResourceQuota and LimitRange objects set it too)
//	# exists: <Kind> <ns>/<name> [<active cluster>]  doctor -f against a cluster: the object exists
//	# checks: files               checked as doctor -f checks its documents (Options.SpecOnly):
//	                              the rules that run only there (spec-refused) run too
type fixture struct {
	snap state.Snapshot
	want []string
	// specChecked: the fixture is about the spec rules, and their findings are compared like any
	// other. Other fixtures are about live state, and most lay a RayCluster over the base that is
	// not written to be spec-clean: their spec findings are dropped (testdata/rules' spec fixtures,
	// and healthy itself, hold every spec rule to firing and to staying silent).
	specChecked bool
	// files: run as doctor -f runs, with Options.SpecOnly.
	files bool
}

// specScoped says whether rule is of scope "spec".
func specScoped(rule string) bool {
	for _, r := range Catalog {
		if r.ID == rule {
			return r.Scope == "spec"
		}
	}
	return false
}

type object struct {
	kind, ns, name string
	raw            []byte
}

func readObjects(t *testing.T, path string) ([]object, []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []object
	var directives []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "# want:") || strings.HasPrefix(line, "# delete:") || strings.HasPrefix(line, "# blind:") || strings.HasPrefix(line, "# checks:") || strings.HasPrefix(line, "# exists:") || strings.HasPrefix(line, "# absent:") {
			directives = append(directives, line[2:])
		}
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if meta.Kind == "" {
			continue
		}
		objs = append(objs, object{meta.Kind, meta.Metadata.Namespace, meta.Metadata.Name, []byte(doc)})
	}
	return objs, directives
}

func loadFixture(t *testing.T, name string) fixture {
	t.Helper()
	base, _ := readObjects(t, filepath.Join("testdata", "healthy.yaml"))
	var over []object
	var directives []string
	if name != "healthy" {
		over, directives = readObjects(t, filepath.Join("testdata", "rules", name+".yaml"))
	}
	id := func(o object) string { return o.kind + " " + o.ns + "/" + o.name }
	deleted := map[string]bool{}
	blind := map[string]bool{}
	f := fixture{specChecked: name == "healthy"}
	for _, d := range directives {
		k, v, _ := strings.Cut(d, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "want":
			f.want = append(f.want, v)
			if _, rule, _ := strings.Cut(v, " "); specScoped(rule) {
				f.specChecked = true
			}
		case "checks":
			f.specChecked = f.specChecked || v == "spec" || v == "files"
			f.files = f.files || v == "files"
			if v == "admission" && f.snap.Admission == nil {
				f.snap.Admission = &state.Admission{}
			}
		case "exists":
			if f.snap.Admission == nil {
				f.snap.Admission = &state.Admission{}
			}
			var e state.Existing
			var nsName string
			fmt.Sscan(v, &e.Kind, &nsName, &e.ActiveCluster)
			e.Namespace, e.Name, _ = strings.Cut(nsName, "/")
			f.snap.Admission.Existing = append(f.snap.Admission.Existing, e)
		case "delete":
			deleted[v] = true
		case "absent":
			// absent: gateway-api — the cluster has no Gateway API's CRDs (the LIST's 404).
			f.snap.NoGatewayAPI = v == "gateway-api"
		case "blind":
			blind[v] = true
		}
	}
	replaced := map[string]bool{}
	for _, o := range over {
		replaced[id(o)] = true
	}
	var all []object
	for _, o := range base {
		if !replaced[id(o)] && !deleted[id(o)] {
			all = append(all, o)
		}
	}
	all = append(all, over...)
	s := &f.snap
	s.Now = fixtureNow
	for _, o := range all {
		var err error
		switch o.kind {
		case "RayCluster":
			err = decodeAppend(o.raw, &s.Clusters, true)
		case "RayService":
			err = decodeAppend(o.raw, &s.Services, true)
		case "RayJob":
			err = decodeRayJob(o.raw, s)
		case "RayCronJob":
			err = decodeRayCronJob(o.raw, s)
		case "Gateway":
			err = decodeAppend(o.raw, &s.Gateways, !blind["gateways"])
		case "HTTPRoute":
			err = decodeAppend(o.raw, &s.HTTPRoutes, !blind["httproutes"])
		case "Pod":
			// The loader lists submitter pods apart, by the Job controller's label.
			if strings.Contains(string(o.raw), submitterJobLabel+":") {
				err = decodeAppend(o.raw, &s.SubmitterPods, true)
			} else {
				err = decodeAppend(o.raw, &s.Pods, true)
			}
		case "Node":
			err = decodeAppend(o.raw, &s.Nodes, !blind["nodes"])
		case "Service":
			err = decodeAppend(o.raw, &s.Serve, !blind["services"])
		case "Deployment":
			err = decodeAppend(o.raw, &s.Deployments, !blind["deployments"])
		case "Event":
			err = decodeAppend(o.raw, &s.Events, !blind["events"])
		case "EndpointSlice":
			err = decodeAppend(o.raw, &s.ServeEndpoints, !blind["endpointslices"])
		case "Job":
			err = decodeAppend(o.raw, &s.CleanupJobs, !blind["jobs"])
		case "PodDisruptionBudget":
			err = decodeAppend(o.raw, &s.PDBs, !blind["poddisruptionbudgets"])
		case "NetworkPolicy":
			err = decodeAppend(o.raw, &s.NetworkPolicies, !blind["networkpolicies"])
		case "RayDashboard":
			err = appendRayView(o.raw, s)
		case "ResourceQuota", "LimitRange":
			if s.Admission == nil {
				s.Admission = &state.Admission{}
			}
			if o.kind == "ResourceQuota" {
				err = decodeAppend(o.raw, &s.Admission.Quotas, !blind["resourcequotas"])
			} else {
				err = decodeAppend(o.raw, &s.Admission.LimitRanges, true)
			}
		default:
			err = fmt.Errorf("unknown kind %q", o.kind)
		}
		if err != nil {
			t.Fatalf("%s: %s: %v", name, id(o), err)
		}
	}
	for r := range blind {
		s.Blind = append(s.Blind, state.Gap{Resource: r, Reason: "forbidden"})
	}
	return f
}

// rayDashboard is a fixture's "kind: RayDashboard": what a head's dashboard answered doctor
// --ray, as Ray's own JSON, read by rayapi's decoders (metadata names the RayCluster).
type rayDashboard struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"metadata"`
	Head        string              `json:"head"`
	Port        int                 `json:"port"`
	Unreachable *rayapi.Unreachable `json:"unreachable"`
	// Auth and TokenFrom are how the head's Ray asks for a token, and where doctor read it.
	Auth       string `json:"auth"`
	TokenFrom  string `json:"readFrom"`
	GCSHealthz *struct {
		Code int    `json:"code"`
		Body string `json:"body"`
	} `json:"gcsHealthz"`
	Version json.RawMessage `json:"version"`
	Nodes   json.RawMessage `json:"nodes"`
	Serve   json.RawMessage `json:"serve"`
	Jobs    json.RawMessage `json:"jobs"`
	// ClusterStatus is /api/cluster_status.
	ClusterStatus json.RawMessage `json:"clusterStatus"`
}

func appendRayView(raw []byte, s *state.Snapshot) error {
	var d rayDashboard
	if err := yaml.UnmarshalStrict(raw, &d); err != nil {
		return err
	}
	v := rayapi.View{Namespace: d.Metadata.Namespace, Cluster: d.Metadata.Name, Head: d.Head, Port: d.Port, Unreachable: d.Unreachable,
		Auth: d.Auth, TokenFrom: d.TokenFrom}
	if d.GCSHealthz != nil {
		v.GCSAlive, v.GCSMessage = d.GCSHealthz.Code == 200, d.GCSHealthz.Body
	}
	var err error
	if len(d.Version) > 0 {
		if v.Version, err = rayapi.DecodeVersion(d.Version); err != nil {
			return err
		}
	}
	if len(d.Nodes) > 0 {
		if v.Nodes, err = rayapi.DecodeNodes(d.Nodes); err != nil {
			return err
		}
		v.NodesRead = true
	}
	if len(d.Serve) > 0 {
		if v.Apps, err = rayapi.DecodeApps(d.Serve); err != nil {
			return err
		}
		v.AppsRead = true
	}
	if len(d.Jobs) > 0 {
		if v.Jobs, err = rayapi.DecodeJobs(d.Jobs); err != nil {
			return err
		}
		v.JobsRead = true
	}
	if len(d.ClusterStatus) > 0 {
		if v.Demands, v.PendingLaunches, v.AutoscalerRead, err = rayapi.DecodeClusterStatus(d.ClusterStatus); err != nil {
			return err
		}
	}
	s.Ray, s.RayAsked = append(s.Ray, v), true
	return nil
}

// decodeRayCronJob decodes a RayCronJob strictly but for its jobTemplate, which the plugin's
// reading of it (ray.RayCronJob) leaves out.
func decodeRayCronJob(raw []byte, s *state.Snapshot) error {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return err
	}
	if js, err = withoutField(js, "spec", "jobTemplate"); err != nil {
		return err
	}
	return decodeAppend(js, &s.CronJobs, true)
}

// decodeRayJob decodes a RayJob as the loaders do: typed, with the fields newer releases write
// (KubeRay v1.7.0's status.jobStatusCheckFailureStartTime) read beside it into Snapshot.JobsNewer.
func decodeRayJob(raw []byte, s *state.Snapshot) error {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return err
	}
	n, err := ray.RayJobNewerOf(js)
	if err != nil {
		return err
	}
	// The typed RayJob has no such field.
	if js, err = withoutField(js, "status", "jobStatusCheckFailureStartTime"); err != nil {
		return err
	}
	if err := decodeAppend(js, &s.Jobs, true); err != nil {
		return err
	}
	if !n.IsZero() {
		if s.JobsNewer == nil {
			s.JobsNewer = map[string]ray.RayJobNewer{}
		}
		j := s.Jobs[len(s.Jobs)-1]
		s.JobsNewer[j.Namespace+"/"+j.Name] = n
	}
	return nil
}

// withoutField is the JSON object js without section.field, which the strict decoding that
// follows would refuse.
func withoutField(js []byte, section, field string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, err
	}
	if sec, ok := m[section].(map[string]any); ok {
		delete(sec, field)
	}
	return json.Marshal(m)
}

// decodeAppend decodes one fixture object strictly (a typo in a field fails the fixture) and
// appends it to list when keep: a resource the fixture marks blind is decoded but never seen.
func decodeAppend[T any](raw []byte, list *[]T, keep bool) error {
	var v T
	if err := yaml.UnmarshalStrict(raw, &v); err != nil {
		return err
	}
	if keep {
		*list = append(*list, v)
	}
	return nil
}

// got lists findings as "<severity> <rule>", the form fixtures' want lines use.
func got(r Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, string(f.Severity)+" "+f.Rule)
	}
	return out
}

// gotChecked is got(r) without the spec rules' findings when f does not check them.
func (f fixture) gotChecked(r Report) []string {
	var out []string
	for _, fd := range r.Findings {
		if f.specChecked || !specScoped(fd.Rule) {
			out = append(out, string(fd.Severity)+" "+fd.Rule)
		}
	}
	return out
}
