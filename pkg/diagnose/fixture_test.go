package diagnose

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/yaml"
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
type fixture struct {
	snap Snapshot
	want []string
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
		if strings.HasPrefix(line, "# want:") || strings.HasPrefix(line, "# delete:") || strings.HasPrefix(line, "# blind:") {
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
	var f fixture
	for _, d := range directives {
		k, v, _ := strings.Cut(d, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "want":
			f.want = append(f.want, v)
		case "delete":
			deleted[v] = true
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
			var v rayv1.RayCluster
			err = yaml.UnmarshalStrict(o.raw, &v)
			s.Clusters = append(s.Clusters, v)
		case "RayService":
			var v rayv1.RayService
			err = yaml.UnmarshalStrict(o.raw, &v)
			s.Services = append(s.Services, v)
		case "RayJob":
			var v rayv1.RayJob
			err = yaml.UnmarshalStrict(o.raw, &v)
			s.Jobs = append(s.Jobs, v)
		case "Pod":
			var v corev1.Pod
			err = yaml.UnmarshalStrict(o.raw, &v)
			s.Pods = append(s.Pods, v)
		case "Node":
			var v corev1.Node
			err = yaml.UnmarshalStrict(o.raw, &v)
			if !blind["nodes"] {
				s.Nodes = append(s.Nodes, v)
			}
		case "Service":
			var v corev1.Service
			err = yaml.UnmarshalStrict(o.raw, &v)
			if !blind["services"] {
				s.Serve = append(s.Serve, v)
			}
		case "Deployment":
			var v appsv1.Deployment
			err = yaml.UnmarshalStrict(o.raw, &v)
			if !blind["deployments"] {
				s.Deployments = append(s.Deployments, v)
			}
		case "Event":
			var v corev1.Event
			err = yaml.UnmarshalStrict(o.raw, &v)
			if !blind["events"] {
				s.Events = append(s.Events, v)
			}
		case "EndpointSlice":
			var v discoveryv1.EndpointSlice
			err = yaml.UnmarshalStrict(o.raw, &v)
			if !blind["endpointslices"] {
				s.ServeEndpoints = append(s.ServeEndpoints, v)
			}
		case "Job":
			var v batchv1.Job
			err = yaml.UnmarshalStrict(o.raw, &v)
			if !blind["jobs"] {
				s.CleanupJobs = append(s.CleanupJobs, v)
			}
		default:
			err = fmt.Errorf("unknown kind %q", o.kind)
		}
		if err != nil {
			t.Fatalf("%s: %s: %v", name, id(o), err)
		}
	}
	for r := range blind {
		s.Blind = append(s.Blind, Gap{Resource: r, Reason: "forbidden"})
	}
	return f
}

// got lists findings as "<severity> <rule>", the form fixtures' want lines use.
func got(r Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, string(f.Severity)+" "+f.Rule)
	}
	return out
}
