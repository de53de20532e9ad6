package manifest

import (
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// budgetDoc is a PodDisruptionBudget document: the typed budget and where it was written.
type budgetDoc struct {
	pdb *policyv1.PodDisruptionBudget
	doc *Document
}

// decodeBudget decodes n when it is a policy/v1 PodDisruptionBudget (kind is the document's, as
// decode returned it); ok is false for every other document.
func decodeBudget(n node, kind string) (budgetDoc, bool, error) {
	api := scalar(n.root, "apiVersion")
	if kind != "PodDisruptionBudget" || !strings.HasPrefix(api, "policy/") {
		return budgetDoc{}, false, nil
	}
	raw, err := yamlv3.Marshal(n.root)
	if err != nil {
		return budgetDoc{}, false, &FileError{File: n.file, Line: n.line, Msg: "cannot decode PodDisruptionBudget: " + err.Error()}
	}
	pdb := &policyv1.PodDisruptionBudget{}
	if err := yaml.Unmarshal(raw, pdb); err != nil {
		return budgetDoc{}, false, &FileError{File: n.file, Line: n.line, Msg: "PodDisruptionBudget does not decode: " + err.Error()}
	}
	meta := child(n.root, "metadata")
	return budgetDoc{pdb: pdb, doc: &Document{File: n.file, Line: n.line, APIVersion: api, Kind: kind,
		Name: scalar(meta, "name"), Namespace: scalar(meta, "namespace"), root: n.root}}, true, nil
}
