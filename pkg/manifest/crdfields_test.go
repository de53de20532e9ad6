package manifest

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/version"
)

// The table read from KubeRay's CRDs, at the fields its docs and issues name: what each release
// has, and where the table cannot tell (a release the module proxy did not serve, one newer than
// the table).
func TestCRDFieldReleases(t *testing.T) {
	for _, c := range []struct {
		kind, path, release string
		has, known          bool
	}{
		{"RayService", "spec.excludeHeadPodFromServeSvc", "v1.1.1", false, true},
		{"RayService", "spec.excludeHeadPodFromServeSvc", "v1.3.0", true, true},
		{"RayService", "spec.excludeHeadPodFromServeSvc", "v1.2.0", false, true}, // v1.1.1 and v1.2.1 agree
		{"RayService", "spec.excludeHeadPodFromServeSvc", "v1.6.0", true, true},
		{"RayService", "spec.excludeHeadPodFromServeSvc", "v1.7.0", true, true},
		{"RayService", "spec.excludeHeadPodFromServeSvc", "v1.8.0", false, false}, // newer than the table
		{"RayCluster", "spec.networkPolicy", "v1.6.2", false, true},
		{"RayCluster", "spec.networkPolicy", "v1.7.0", true, true},
		{"RayService", "spec.excludeHeadPodFromServeSvc", "v0.6.0", false, false},
		{"RayCluster", "spec.authOptions", "v1.5.0", false, true},
		{"RayCluster", "spec.authOptions", "v1.5.1", true, true},
		{"RayJob", "spec.backoffLimit", "v1.2.0", false, false}, // v1.1.1 lacks it, v1.2.1 has it
		{"RayJob", "spec.deletionPolicy", "v1.4.2", true, true},
		{"RayJob", "spec.deletionPolicy", "v1.5.0", false, true},
	} {
		f := tableField(c.kind, "v1", c.path)
		if f == nil || f.path != c.path {
			t.Fatalf("%s %s: not in the table (%+v)", c.kind, c.path, f)
		}
		has, known := f.in(version.MustParseSemantic(c.release))
		if has != c.has || known != c.known {
			t.Errorf("%s %s on %s: has %v known %v, want %v %v", c.kind, c.path, c.release, has, known, c.has, c.known)
		}
	}
	if got := tableField("RayJob", "v1", "spec.deletionPolicy").runsText(); got != "only KubeRay v1.3.0 to v1.4.2 had it" {
		t.Errorf("deletionPolicy's releases: %q", got)
	}
	// A field below a listed one is judged by it; a field in every release is not listed.
	if f := tableField("RayCluster", "v1", "spec.gcsFaultToleranceOptions.redisAddress"); f == nil || f.path != "spec.gcsFaultToleranceOptions" {
		t.Errorf("redisAddress sits in %+v, want spec.gcsFaultToleranceOptions", f)
	}
	if f := tableField("RayCluster", "v1", "spec.headGroupSpec.rayStartParams"); f != nil {
		t.Errorf("rayStartParams is in every release, listed as %+v", f)
	}
}

// The finding names the release that runs it, the releases that have the field, the field at its
// line, and only the outermost of the fields dropped together.
func TestFieldDroppedMessage(t *testing.T) {
	file := "testdata/rules/field-dropped-old-operator.yaml"
	s := read(t, Input{Paths: []string{file}})
	s.Snapshot("default", time.Unix(0, 0))
	s.JudgeFields("v1.1.1")
	fs := s.NoteFindings()
	if len(fs) != 2 {
		t.Fatalf("findings %+v", fs)
	}
	f := fs[0]
	for _, want := range []string{"the RayService CRD of KubeRay v1.1.1, the operator here, has no field spec.excludeHeadPodFromServeSvc (KubeRay v1.3.0 and later have it)", "kubectl refuses the object"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q lacks %q", f.Message, want)
		}
	}
	if f.Source.Line != 12 || fs[1].Field != "spec.rayClusterConfig.gcsFaultToleranceOptions" || fs[1].Source.Line != 14 {
		t.Errorf("lines %d, %d, fields %q %q", f.Source.Line, fs[1].Source.Line, f.Field, fs[1].Field)
	}
	// Offline, nothing said which release runs it: a ray.io/v1 document is not judged.
	s = read(t, Input{Paths: []string{file}})
	s.Snapshot("default", time.Unix(0, 0))
	s.JudgeFields("")
	if fs := s.NoteFindings(); len(fs) != 0 {
		t.Errorf("offline: %+v", fs)
	}
}
