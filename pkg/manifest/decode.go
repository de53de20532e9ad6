package manifest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	sigsjson "sigs.k8s.io/json"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// APITypesVersion is the KubeRay release whose API types the reader decodes into: a field a
// newer release added is unknown to it, so an unknown field is information, not a warning.
const APITypesVersion = ray.APITypesRelease

// Ray's API group: documents of other groups and kinds are skipped, and counted.
const rayGroup = "ray.io"

// decoded is one Ray document turned into its typed object.
type decoded struct {
	doc   *Document
	obj   any // *rayv1.RayCluster, *rayv1.RayService or *rayv1.RayJob
	notes []Note
}

// decode turns n into a typed Ray object, or says it is another kind (ok false, no error).
func decode(n node) (*decoded, string, error) {
	api, kind := scalar(n.root, "apiVersion"), scalar(n.root, "kind")
	if api == "" || kind == "" {
		return nil, "", &FileError{File: n.file, Line: n.line, Msg: "not a Kubernetes object: apiVersion and kind are required"}
	}
	group, _, _ := strings.Cut(api, "/")
	if !strings.Contains(api, "/") {
		group = "" // the core group: v1
	}
	var obj any
	switch {
	case group == rayGroup && kind == "RayCluster":
		obj = &rayv1.RayCluster{}
	case group == rayGroup && kind == "RayService":
		obj = &rayv1.RayService{}
	case group == rayGroup && kind == "RayJob":
		obj = &rayv1.RayJob{}
	default:
		return nil, kind, nil
	}
	meta := child(n.root, "metadata")
	d := &decoded{doc: &Document{File: n.file, Line: n.line, APIVersion: api, Kind: kind,
		Name: scalar(meta, "name"), Namespace: scalar(meta, "namespace"), root: n.root}}
	if d.doc.Name == "" {
		// kubectl create makes the name up (KubeRay's Kueue samples are written so): the
		// findings name it by its prefix.
		d.doc.Name = scalar(meta, "generateName")
	}
	if d.doc.Name == "" {
		return nil, "", &FileError{File: n.file, Line: n.line, Msg: kind + " has no metadata.name (nor generateName)"}
	}
	var generic map[string]any
	if err := n.root.Decode(&generic); err != nil {
		return nil, "", &FileError{File: n.file, Line: n.line, Msg: "cannot decode " + kind + ": " + err.Error()}
	}
	d.notes = stringifyStartParams(d.doc, generic)
	np, err := networkPolicyOf(kind, generic)
	if err != nil {
		return nil, "", &FileError{File: n.file, Line: n.line, Msg: kind + " " + d.doc.Name + " does not decode: " + clusterSpecPath[kind] + ".networkPolicy: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
	d.doc.NetworkPolicy = np
	d.doc.GCSStore = gcsStoreOf(kind, generic)
	d.doc.Gated = gatedOf(kind, generic, np != nil, d.doc.GCSStore != nil)
	data, err := json.Marshal(generic)
	if err != nil {
		return nil, "", &FileError{File: n.file, Line: n.line, Msg: "cannot decode " + kind + ": " + err.Error()}
	}
	strict, err := sigsjson.UnmarshalStrict(data, obj)
	if err != nil {
		return nil, "", &FileError{File: n.file, Line: n.line, Msg: kind + " " + d.doc.Name + " does not decode: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
	for _, e := range strict {
		d.doc.Undecoded = append(d.doc.Undecoded, strictField(e.Error()))
		if n, ok := unknownField(d.doc, e.Error()); ok {
			d.notes = append(d.notes, n)
		}
	}
	setName(obj, d.doc.Name)
	d.obj = obj
	return d, "", nil
}

// startParamPaths are where rayStartParams sit in each kind: the head's and every worker
// group's, under the kind's cluster spec.
var clusterSpecPath = map[string]string{"RayCluster": "spec", "RayService": "spec.rayClusterConfig", "RayJob": "spec.rayClusterSpec"}

// stringifyStartParams turns rayStartParams values that are not strings into strings, so that
// the document still decodes, and notes each: the CRD declares them strings, and the API server
// refuses a number or a boolean there (KubeRay's docs: every value is a string, "num-cpus": "0").
func stringifyStartParams(doc *Document, obj map[string]any) []Note {
	spec := lookupMap(obj, clusterSpecPath[doc.Kind])
	if spec == nil {
		return nil
	}
	prefix := clusterSpecPath[doc.Kind]
	var notes []Note
	fix := func(params map[string]any, at string) {
		keys := make([]string, 0, len(params))
		for k := range params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := params[k]
			if _, ok := v.(string); ok || v == nil {
				continue
			}
			s := fmt.Sprint(v)
			params[k] = s
			shown := s
			if redact.IsSecretName(k) {
				shown = "<redacted>"
			}
			notes = append(notes, Note{Doc: doc, Rule: RuleStartParamNotString, Field: at + "." + k,
				Message: fmt.Sprintf("rayStartParams %s is %s, %s, not a string: the API server refuses the %s (the CRD declares every value a string)", k, yamlType(v), shown, doc.Kind),
				Remedy:  fmt.Sprintf("quote it: %s: %q", k, shown)})
		}
	}
	if head, ok := spec["headGroupSpec"].(map[string]any); ok {
		if p, ok := head["rayStartParams"].(map[string]any); ok {
			fix(p, prefix+".headGroupSpec.rayStartParams")
		}
	}
	if groups, ok := spec["workerGroupSpecs"].([]any); ok {
		for i, g := range groups {
			if gm, ok := g.(map[string]any); ok {
				if p, ok := gm["rayStartParams"].(map[string]any); ok {
					fix(p, fmt.Sprintf("%s.workerGroupSpecs[%d].rayStartParams", prefix, i))
				}
			}
		}
	}
	return notes
}

// yamlType names a decoded scalar's type as YAML does.
func yamlType(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	}
	return "a " + fmt.Sprintf("%T", v)
}

// unknownField notes a field the Ray kind does not have: kubectl's strict field validation
// refuses the object, and clients that ask for none get it pruned by the API server. A field
// some KubeRay release has is no typo: field-dropped judges it against the release that runs it.
func unknownField(doc *Document, msg string) (Note, bool) {
	field := strictField(msg)
	if knownToSomeRelease(doc.Kind, field) {
		return Note{}, false
	}
	return Note{Doc: doc, Rule: RuleUnknownField, Field: field,
		Message: fmt.Sprintf("%s has no field %s in KubeRay %s's API, the newest this doctor reads: if it is a typo, kubectl refuses the object (strict field validation, its default) and other clients' objects lose the field; a newer operator's field is fine", doc.Kind, field, APITypesVersion),
		Remedy:  "check the spelling and the indentation against the " + doc.Kind + " CRD of the operator version you run (kubectl explain " + strings.ToLower(doc.Kind) + ".spec)"}, true
}

// strictField is the field path of a strict decode's complaint (`unknown field "spec.x"`).
func strictField(msg string) string {
	field := msg
	if _, rest, ok := strings.Cut(msg, `unknown field "`); ok {
		field, _, _ = strings.Cut(rest, `"`)
	}
	return field
}

// lookupMap follows a dotted path of mapping keys in obj.
func lookupMap(obj map[string]any, path string) map[string]any {
	cur := obj
	for _, k := range strings.Split(path, ".") {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil
		}
		cur = next
	}
	return cur
}

// networkPolicyOf reads the cluster spec's networkPolicy of a document of kind, nil when unset.
func networkPolicyOf(kind string, obj map[string]any) (*ray.NetworkPolicyConfig, error) {
	raw := lookupMap(obj, clusterSpecPath[kind]+".networkPolicy")
	if raw == nil {
		return nil, nil
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	np := &ray.NetworkPolicyConfig{}
	return np, json.Unmarshal(data, np)
}

// gcsStoreOf reads what the cluster spec of a document of kind declares of an embedded (RocksDB)
// GCS store, nil when it declares none.
func gcsStoreOf(kind string, obj map[string]any) *ray.GCSStoreDecl {
	ft := lookupMap(obj, clusterSpecPath[kind]+".gcsFaultToleranceOptions")
	if ft == nil {
		return nil
	}
	backend, _ := ft["backend"].(string)
	if !strings.EqualFold(backend, ray.GCSStorageRocksDB) {
		return nil
	}
	decl := &ray.GCSStoreDecl{Backend: backend}
	if st, ok := ft["storage"].(map[string]any); ok {
		decl.ClaimName, _ = st["claimName"].(string)
	}
	return decl
}

// gatedOf reads what the cluster spec of a document of kind declares that KubeRay v1.7.0 judges
// against its feature gates or Ray's version; networkPolicy and rocksdb are read already.
func gatedOf(kind string, obj map[string]any, networkPolicy, rocksDB bool) ray.GatedDecl {
	d := ray.GatedDecl{NetworkPolicy: networkPolicy, RocksDB: rocksDB}
	spec := lookupMap(obj, clusterSpecPath[kind])
	if spec == nil {
		return d
	}
	d.TLS = spec["tlsOptions"] != nil
	d.HistoryServer = spec["historyServerOptions"] != nil
	groups, _ := spec["workerGroupSpecs"].([]any)
	for _, g := range groups {
		m, _ := g.(map[string]any)
		name, _ := m["groupName"].(string)
		var p int64
		switch v := m["priority"].(type) {
		case int:
			p = int64(v)
		case int64:
			p = v
		case uint64:
			p = int64(v)
		case float64:
			p = int64(v)
		}
		if p != 0 {
			d.Priorities = append(d.Priorities, ray.GroupPriority{Group: name, Priority: int32(p)})
		}
	}
	return d
}

// setName names an object whose document has only a generateName.
func setName(obj any, name string) {
	switch o := obj.(type) {
	case *rayv1.RayCluster:
		o.Name = name
	case *rayv1.RayService:
		o.Name = name
	case *rayv1.RayJob:
		o.Name = name
	}
}
