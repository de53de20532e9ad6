package manifest

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// RuleFieldDropped: a document sets a field the CRD of the KubeRay release that would run it
// does not have. kubectl refuses the object (strict field validation, its default); any other
// client (Helm, Argo CD, client-go) gets the field pruned by the API server without a word, so
// the feature it asks for is off: excludeHeadPodFromServeSvc on an operator before v1.3.0 leaves
// the head in the Serve Service (kuberay #1153), a RayJob's deletionPolicy on v1.5.0 deletes
// nothing. The table is read from each release's own CRDs (hack/crdfields).
const RuleFieldDropped = diagnose.RuleFieldDropped

// releaseRun is a run of KubeRay releases whose CRD has a field: from to to, to "" when the
// newest release in crdReleases still has it.
type releaseRun struct{ from, to string }

// crdField is a field some releases' CRDs have and others not; no runs: no release has it (a
// field of ray.io/v1 that ray.io/v1alpha1 never got).
type crdField struct {
	path string
	runs []releaseRun
}

// indexRE is a list index in a field path: spec.workerGroupSpecs[0] reads as spec.workerGroupSpecs[].
var indexRE = regexp.MustCompile(`\[\d+\]`)

// knownToSomeRelease reports whether a path a strict decode called unknown is a field some KubeRay
// release's CRD has: not a typo, and field-dropped judges it against the release that runs it.
func knownToSomeRelease(kind, path string) bool {
	f := tableField(kind, "v1", indexRE.ReplaceAllString(path, "[]"))
	return f != nil && f.path == indexRE.ReplaceAllString(path, "[]") && len(f.runs) > 0
}

// tableField is the table's entry for path or the nearest field it sits in, nil when neither is
// listed (every release has it, or none: a typo is manifest-unknown-field's).
func tableField(kind, api, path string) *crdField {
	fields := crdFields[kind][api]
	for p := path; p != ""; p = parentField(p) {
		for i := range fields {
			if fields[i].path == p {
				return &fields[i]
			}
		}
	}
	return nil
}

// parentField is the field path p sits in: "spec.a[].b" is in "spec.a", "" at the top.
func parentField(p string) string {
	i := strings.LastIndex(p, ".")
	if i < 0 {
		return ""
	}
	return strings.TrimSuffix(p[:i], "[]")
}

// in reports whether release rel's CRD has the field. known is false when the table cannot tell:
// rel is older or newer than every release read, or falls between two that disagree (a release
// the module proxy did not serve).
func (f *crdField) in(rel *version.Version) (has, known bool) {
	hasAt := func(r *version.Version) bool {
		for _, run := range f.runs {
			if r.LessThan(version.MustParseSemantic(run.from)) {
				continue
			}
			if run.to == "" || !version.MustParseSemantic(run.to).LessThan(r) {
				return true
			}
		}
		return false
	}
	var before *version.Version
	for _, name := range crdReleases {
		r := version.MustParseSemantic(name)
		switch {
		case r.EqualTo(rel):
			return hasAt(r), true
		case r.LessThan(rel):
			before = r
		default:
			if before == nil || hasAt(before) != hasAt(r) {
				return false, false
			}
			return hasAt(r), true
		}
	}
	return false, false // newer than the table: a new release may have changed it
}

// runsText says which releases have the field: "KubeRay v1.3.0 and later have it", "only KubeRay
// v1.3.0 to v1.4.2 had it", "only KubeRay v1.0.0 had it".
func (f *crdField) runsText() string {
	var parts []string
	open := false
	for _, r := range f.runs {
		switch {
		case r.to == "":
			parts, open = append(parts, r.from+" and later"), true
		case r.to == r.from:
			parts = append(parts, r.from)
		default:
			parts = append(parts, r.from+" to "+r.to)
		}
	}
	if open {
		return "KubeRay " + strings.Join(parts, ", ") + " have it"
	}
	return "only KubeRay " + strings.Join(parts, ", ") + " had it"
}

// JudgeFields adds a field-dropped note for each field of each document that the CRD of the
// KubeRay release operator (the operator that would run them, "" when no cluster said) does not
// have. Without a release only ray.io/v1alpha1's fields are judged: no release gave that API
// version a field added after KubeRay v1.0.
func (s *Set) JudgeFields(operator string) {
	rel, err := version.ParseSemantic(operator)
	if err != nil {
		rel = nil
	}
	for _, d := range s.Documents {
		s.Notes = append(s.Notes, droppedFields(d, rel)...)
	}
}

// droppedFields walks d's spec and notes each outermost field rel's CRD lacks.
func droppedFields(d *Document, rel *version.Version) []Note {
	_, api, _ := strings.Cut(d.APIVersion, "/")
	if crdFields[d.Kind][api] == nil {
		return nil
	}
	var notes []Note
	var walk func(n *yaml.Node, at string)
	walk = func(n *yaml.Node, at string) {
		switch n.Kind {
		case yaml.SequenceNode:
			for i, item := range n.Content {
				walk(item, fmt.Sprintf("%s[%d]", at, i))
			}
			return
		case yaml.MappingNode:
		default:
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			field := at + "." + n.Content[i].Value
			if note, ok := judgeField(d, api, field, rel); ok {
				notes = append(notes, note)
				continue // its fields go with it
			}
			if !EmbeddedFields[n.Content[i].Value] {
				walk(n.Content[i+1], field)
			}
		}
	}
	if spec := child(d.root, "spec"); spec != nil {
		walk(spec, "spec")
	}
	return notes
}

// EmbeddedFields are the fields whose values are Kubernetes' own objects (a pod template, a
// Service, object metadata, status): their insides follow the Kubernetes version KubeRay's CRDs
// were generated with, not KubeRay's features, so hack/crdfields leaves them out of the table and
// the judge does not look inside them.
var EmbeddedFields = map[string]bool{"template": true, "metadata": true, "status": true, "volumeClaimTemplates": true,
	"headService": true, "submitterPodTemplate": true}

// judgeField is field's note when rel's CRD (or, for v1alpha1, every release's) lacks it.
func judgeField(d *Document, api, field string, rel *version.Version) (Note, bool) {
	path := indexRE.ReplaceAllString(field, "[]")
	f := tableField(d.Kind, api, path)
	if f == nil || f.path != path {
		return Note{}, false
	}
	if len(f.runs) == 0 {
		return Note{Doc: d, Rule: RuleFieldDropped, Field: field,
			Message: fmt.Sprintf("%s's %s schema has no field %s in any KubeRay release (v1alpha1 kept KubeRay v1.0's fields; ray.io/v1 has it): kubectl refuses the object (strict field validation, its default), and any other client's object loses the field, so the operator never sees it",
				d.APIVersion, d.Kind, field),
			Remedy: "write apiVersion: ray.io/v1 (every KubeRay release since v1.0.0 serves and stores it)"}, true
	}
	if rel == nil {
		return Note{}, false
	}
	has, known := f.in(rel)
	if has || !known {
		return Note{}, false
	}
	return Note{Doc: d, Rule: RuleFieldDropped, Field: field,
		Message: fmt.Sprintf("the %s CRD of KubeRay v%s, the operator here, has no field %s (%s): kubectl refuses the object (strict field validation, its default), and any other client's object (Helm, Argo CD, client-go) loses the field, so what it turns on stays off",
			d.Kind, rel, field, f.runsText()),
		Remedy: fmt.Sprintf("upgrade the KubeRay operator and its CRDs to a release that has %s, or drop the field and do without what it sets", path)}, true
}
