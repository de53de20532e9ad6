package manifest

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

func read(t *testing.T, in Input) *Set {
	t.Helper()
	s, err := Read(in)
	if err != nil {
		t.Fatalf("Read(%v): %v", in.Paths, err)
	}
	return s
}

func docs(s *Set) []string {
	var out []string
	for _, d := range s.Documents {
		out = append(out, d.String()+" "+d.Kind+"/"+d.Name)
	}
	return out
}

func TestReadMultiDocumentYAML(t *testing.T) {
	s := read(t, Input{Paths: []string{"testdata/mixed.yaml"}})
	want := []string{"testdata/mixed.yaml:8 RayCluster/raw", "testdata/mixed.yaml:34 RayService/web"}
	if got := docs(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("documents:\n got %q\nwant %q", got, want)
	}
	if s.Skipped["Service"] != 1 || s.SkippedCount() != 1 {
		t.Errorf("skipped %v, want one Service", s.Skipped)
	}
	var notes []string
	for _, n := range s.Notes {
		notes = append(notes, n.Rule+" "+n.Field)
	}
	wantNotes := []string{RuleStartParamNotString + " spec.headGroupSpec.rayStartParams.num-cpus", RuleUnknownField + " spec.workerGroupSpecs[0].templat"}
	if strings.Join(notes, "\n") != strings.Join(wantNotes, "\n") {
		t.Fatalf("notes:\n got %q\nwant %q", notes, wantNotes)
	}
	// The number was made a string, so the rules read what the user meant.
	if got := s.clusters[0].Spec.HeadGroupSpec.RayStartParams["num-cpus"]; got != "0" {
		t.Errorf("num-cpus = %q, want \"0\"", got)
	}
}

func TestReadJSONStreamAndLists(t *testing.T) {
	s := read(t, Input{Paths: []string{"testdata/list.json"}})
	want := []string{"testdata/list.json:2 RayJob/etl", "testdata/list.json:6 RayCluster/second"}
	if got := docs(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("documents:\n got %q\nwant %q", got, want)
	}
	if s.Skipped["Deployment"] != 1 {
		t.Errorf("skipped %v, want one Deployment", s.Skipped)
	}
}

func TestReadDirectory(t *testing.T) {
	flat := read(t, Input{Paths: []string{"testdata/dir"}})
	if got := docs(flat); len(got) != 2 {
		t.Errorf("without -R: %q, want a.json's two documents only", got)
	}
	deep := read(t, Input{Paths: []string{"testdata/dir"}, Recursive: true})
	if got := docs(deep); len(got) != 3 || !strings.Contains(got[2], "testdata/dir/sub/b.yml:1 RayCluster/deep") {
		t.Errorf("with -R: %q, want b.yml's too", got)
	}
}

func TestReadStdin(t *testing.T) {
	s := read(t, Input{Paths: []string{"-"}, Stdin: strings.NewReader("apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: piped}\n")})
	if got := docs(s); len(got) != 1 || got[0] != "<stdin>:1 RayCluster/piped" {
		t.Errorf("stdin: %q", got)
	}
}

func TestABadFileIsOneLineAndTheOthersAreRead(t *testing.T) {
	s := read(t, Input{Paths: []string{"testdata/broken.yaml", "testdata/mixed.yaml"}})
	if len(s.Errors) != 1 {
		t.Fatalf("errors %v, want one", s.Errors)
	}
	msg := s.Errors[0].Error()
	if !strings.HasPrefix(msg, "testdata/broken.yaml:10: not valid YAML") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line at broken.yaml:10", msg)
	}
	for _, d := range s.Documents {
		if d.File == "testdata/broken.yaml" {
			t.Errorf("%s was kept from the file that does not parse", d)
		}
	}
	if len(s.Documents) != 2 {
		t.Errorf("mixed.yaml's documents were not read: %q", docs(s))
	}
}

func TestReadRefusesWhatNamesNothing(t *testing.T) {
	for _, in := range []Input{{}, {Paths: []string{"testdata/nope.yaml"}}, {Paths: []string{"testdata/dir/sub/.."}, Recursive: false}} {
		_, err := Read(in)
		if in.Paths != nil && in.Paths[0] == "testdata/dir/sub/.." {
			if err != nil {
				t.Errorf("%v: %v", in.Paths, err)
			}
			continue
		}
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Kind != fault.Invalid {
			t.Errorf("%v: err %v, want Invalid", in.Paths, err)
		}
	}
}

func TestSnapshotMakesTheClustersOfOwners(t *testing.T) {
	s := read(t, Input{Paths: []string{"testdata/mixed.yaml", "testdata/list.json"}})
	snap := s.Snapshot("default", time.Unix(0, 0))
	var got []string
	for _, c := range snap.Clusters {
		owner := ""
		if len(c.OwnerReferences) == 1 {
			owner = " owned by " + c.OwnerReferences[0].Kind + "/" + c.OwnerReferences[0].Name
		}
		got = append(got, c.Namespace+"/"+c.Name+owner)
	}
	// The RayJob has no rayClusterSpec: no cluster is made of it.
	want := []string{"ml/raw", "default/second", "default/web owned by RayService/web"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("clusters:\n got %q\nwant %q", got, want)
	}
}

func TestLineOfAField(t *testing.T) {
	s := read(t, Input{Paths: []string{"testdata/mixed.yaml"}})
	raw := s.Documents[0]
	for field, want := range map[string]int{
		"": 8,
		"spec.headGroupSpec.template.spec.containers[0].resources.limits.memory":              26,
		"spec.headGroupSpec.template.spec.containers[0].resources.requests.ephemeral-storage": 24,
		"spec.workerGroupSpecs[0].groupName":                                                  28,
		"spec.workerGroupSpecs[3].groupName":                                                  27,
	} {
		if got := raw.lineOf(field); got != want {
			t.Errorf("lineOf(%q) = %d, want %d", field, got, want)
		}
	}
}

// The version unknown-field findings name is the one go.mod builds with.
func TestAPITypesVersionIsGoMods(t *testing.T) {
	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "github.com/ray-project/kuberay/ray-operator "+APITypesVersion+"\n") {
		t.Errorf("go.mod does not require ray-operator %s: update APITypesVersion", APITypesVersion)
	}
}

// A field of a RayService's cluster spec that these API types lack (spec.rayClusterConfig.
// tlsOptions came with KubeRay v1.7.0) is in the snapshot's Undecoded: the typed object lost
// it, and KubeRay's hash of the spec cannot be computed from it.
func TestSnapshotSaysWhatTheTypesDropped(t *testing.T) {
	doc := `apiVersion: ray.io/v1
kind: RayService
metadata: {name: svc, namespace: ml}
spec:
  rayClusterConfig:
    tlsOptions: {}
    headGroupSpec:
      rayStartParams: {}
      template: {spec: {containers: [{name: ray-head, image: rayproject/ray:2.52.0}]}}
`
	s := read(t, Input{Paths: []string{"-"}, Stdin: strings.NewReader(doc)})
	snap := s.Snapshot("default", time.Unix(0, 0))
	got := snap.Undecoded[state.UndecodedKey("RayService", "ml", "svc")]
	if !slices.Equal(got, []string{"spec.rayClusterConfig.tlsOptions"}) {
		t.Fatalf("Undecoded = %v, want spec.rayClusterConfig.tlsOptions", snap.Undecoded)
	}
}

// A syntax error is reported at the line of the fault, not at the start of the block that holds
// it: the fifth line of the fourth level here, line 14 (yaml.v3 names the enclosing block).
func TestSyntaxErrorAtTheFaultsLine(t *testing.T) {
	for file, want := range map[string]string{
		"testdata/misindented.yaml": "testdata/misindented.yaml:14: not valid YAML",
		"testdata/broken.yaml":      "testdata/broken.yaml:10: not valid YAML",
	} {
		s := read(t, Input{Paths: []string{file}})
		if len(s.Errors) != 1 || !strings.HasPrefix(s.Errors[0].Error(), want) {
			t.Errorf("%s: errors %v, want one starting %q", file, s.Errors, want)
		}
	}
	bad := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: 1\n  b:\n    c: 1\n   d: 2\n"
	s := read(t, Input{Paths: []string{"-"}, Stdin: strings.NewReader(bad)})
	if len(s.Errors) != 1 || !strings.HasPrefix(s.Errors[0].Error(), "<stdin>:9: not valid YAML") {
		t.Errorf("stdin: errors %v, want one at line 9", s.Errors)
	}
}
