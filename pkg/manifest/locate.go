package manifest

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Locate points every finding of r at its document: Source gets the file and the line of the
// field (or of the document), and a field of a RayCluster made of a RayService or RayJob is
// written where it is in that document (spec.rayClusterConfig..., spec.rayClusterSpec...).
// Call it after Snapshot, on a report of that snapshot.
func (s *Set) Locate(r *diagnose.Report) {
	for i := range r.Findings {
		s.locate(&r.Findings[i])
	}
}

func (s *Set) locate(f *diagnose.Finding) {
	d := s.documentOf(f)
	if d == nil {
		return
	}
	if d.Kind != "RayCluster" && f.Object.Kind != d.Kind && strings.HasPrefix(f.Field, "spec.") {
		f.Field = clusterSpecPath[d.Kind] + strings.TrimPrefix(f.Field, "spec")
	}
	f.Source = &diagnose.Source{File: d.File, Line: d.lineOf(f.Field)}
}

// documentOf is the document a finding is about: the RayJob or RayService it names, else its
// cluster's document (the owner's, for a cluster Snapshot made).
func (s *Set) documentOf(f *diagnose.Finding) *Document {
	switch {
	case f.RayJob != nil:
		return s.find("RayJob", f.RayJob.Namespace, f.RayJob.Name)
	case f.RayService != nil:
		return s.find("RayService", f.RayService.Namespace, f.RayService.Name)
	case f.Object.Kind == "RayService" || f.Object.Kind == "RayJob":
		return s.find(f.Object.Kind, f.Object.Namespace, f.Object.Name)
	case f.Object.Kind == "PodDisruptionBudget":
		for _, b := range s.budgets {
			if b.doc.Name == f.Object.Name && (b.doc.Namespace == f.Object.Namespace || b.doc.Namespace == "" && s.namespace == f.Object.Namespace) {
				return b.doc
			}
		}
	case f.Object.Kind == "NetworkPolicy":
		for _, p := range s.policies {
			if p.doc.Name == f.Object.Name && (p.doc.Namespace == f.Object.Namespace || p.doc.Namespace == "" && s.namespace == f.Object.Namespace) {
				return p.doc
			}
		}
	}
	if d := s.made[f.Cluster.Namespace+"/"+f.Cluster.Name]; d != nil {
		return d
	}
	return s.find("RayCluster", f.Cluster.Namespace, f.Cluster.Name)
}

// Of is the document of a RayCluster in the snapshot (the owner's for one Snapshot made), nil
// for none: the table heads a cluster's findings with it.
func (s *Set) Of(namespace, cluster string) *Document {
	if d := s.made[namespace+"/"+cluster]; d != nil {
		return d
	}
	return s.find("RayCluster", namespace, cluster)
}

func (s *Set) find(kind, namespace, name string) *Document {
	for _, d := range s.Documents {
		ns := d.Namespace
		if ns == "" {
			ns = s.namespace
		}
		if d.Kind == kind && d.Name == name && ns == namespace {
			return d
		}
	}
	return nil
}

// lineOf is the line of field in the document: of the deepest part of the path that is written
// (a missing request is reported at its resources, say), the document's own line for "".
func (d *Document) lineOf(field string) int {
	n, line := d.root, d.Line
	keyLine := 0
	for _, part := range splitPath(field) {
		var next *yaml.Node
		if part.index >= 0 {
			if n.Kind == yaml.SequenceNode && part.index < len(n.Content) {
				next = n.Content[part.index]
			}
		} else if k := key(n, part.key); k != nil {
			next, keyLine = child(n, part.key), k.Line
		}
		if next == nil {
			break
		}
		n = next
		// A field is on its key's line; an item of a list on its own.
		at := n.Line
		if part.index < 0 {
			at = keyLine
		}
		line = d.Line - d.root.Line + at
	}
	return line
}

type pathPart struct {
	key   string
	index int // -1 for a key
}

// splitPath cuts "spec.workerGroupSpecs[1].template.spec.containers[0].resources.limits.nvidia.com/gpu"
// into keys and indices. A key may hold dots (nvidia.com/gpu): the last segments of a path under
// requests, limits, labels, annotations or rayStartParams are one key.
func splitPath(p string) []pathPart {
	if p == "" {
		return nil
	}
	var out []pathPart
	segs := strings.Split(p, ".")
	for i := 0; i < len(segs); i++ {
		seg := segs[i]
		if i > 0 && mapOfNames[segs[i-1]] {
			out = append(out, pathPart{key: strings.Join(segs[i:], "."), index: -1})
			break
		}
		for seg != "" {
			open := strings.IndexByte(seg, '[')
			if open < 0 {
				out = append(out, pathPart{key: seg, index: -1})
				break
			}
			if open > 0 {
				out = append(out, pathPart{key: seg[:open], index: -1})
			}
			end := strings.IndexByte(seg[open:], ']')
			if end < 0 {
				break
			}
			if n, err := strconv.Atoi(seg[open+1 : open+end]); err == nil {
				out = append(out, pathPart{index: n})
			}
			seg = seg[open+end+1:]
		}
	}
	return out
}

// mapOfNames are the fields whose keys are names that may hold dots.
var mapOfNames = map[string]bool{"requests": true, "limits": true, "labels": true, "annotations": true, "rayStartParams": true}

// NoteFindings are the findings of the notes, with their rules' severities from the catalog.
func (s *Set) NoteFindings() []diagnose.Finding {
	out := make([]diagnose.Finding, 0, len(s.Notes))
	for _, n := range s.Notes {
		info, _ := diagnose.RuleOf(n.Rule)
		ns := n.Doc.Namespace
		if ns == "" {
			ns = s.namespace
		}
		f := diagnose.Finding{Rule: n.Rule, Severity: info.Severity, Object: state.Ref{Kind: n.Doc.Kind, Namespace: ns, Name: n.Doc.Name},
			Message: n.Message, Remedy: n.Remedy, Field: n.Field, Evidence: map[string]string{"field": n.Field}}
		switch n.Doc.Kind {
		case "RayCluster":
			f.Cluster = f.Object
		default:
			if c := s.clusterOf(n.Doc); c != "" {
				f.Cluster = state.Ref{Kind: "RayCluster", Namespace: ns, Name: c}
			}
		}
		f.Source = &diagnose.Source{File: n.Doc.File, Line: n.Doc.lineOf(n.Field)}
		out = append(out, f)
	}
	return out
}

// clusterOf is the name of the RayCluster Snapshot made of an owner's document, "" for none.
func (s *Set) clusterOf(d *Document) string {
	for k, md := range s.made {
		if md == d {
			_, name, _ := strings.Cut(k, "/")
			return name
		}
	}
	return ""
}
