package manifest

import (
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// The Kubernetes documents beside the Ray ones that rules judge against the Ray documents' pods:
// PodDisruptionBudgets (budget-never-allows) and NetworkPolicies (network-policy-blocks-dns).

// budgetDoc is a PodDisruptionBudget document: the typed budget and where it was written.
type budgetDoc struct {
	pdb *policyv1.PodDisruptionBudget
	doc *Document
}

// policyDoc is a NetworkPolicy document.
type policyDoc struct {
	policy *networkingv1.NetworkPolicy
	doc    *Document
}

// decodeBudget decodes n when it is a policy/v1 PodDisruptionBudget (kind is the document's, as
// decode returned it); ok is false for every other document.
func decodeBudget(n node, kind string) (budgetDoc, bool, error) {
	if kind != "PodDisruptionBudget" || !strings.HasPrefix(scalar(n.root, "apiVersion"), "policy/") {
		return budgetDoc{}, false, nil
	}
	pdb := &policyv1.PodDisruptionBudget{}
	doc, err := decodeKube(n, kind, pdb)
	return budgetDoc{pdb: pdb, doc: doc}, err == nil, err
}

// decodeNetworkPolicy decodes n when it is a networking.k8s.io NetworkPolicy.
func decodeNetworkPolicy(n node, kind string) (policyDoc, bool, error) {
	if kind != "NetworkPolicy" || !strings.HasPrefix(scalar(n.root, "apiVersion"), "networking.k8s.io/") {
		return policyDoc{}, false, nil
	}
	p := &networkingv1.NetworkPolicy{}
	doc, err := decodeKube(n, kind, p)
	return policyDoc{policy: p, doc: doc}, err == nil, err
}

// decodeKube decodes n into obj, a Kubernetes type of kind, and says where it was written.
func decodeKube(n node, kind string, obj any) (*Document, error) {
	raw, err := yamlv3.Marshal(n.root)
	if err != nil {
		return nil, &FileError{File: n.file, Line: n.line, Msg: "cannot decode " + kind + ": " + err.Error()}
	}
	if err := yaml.Unmarshal(raw, obj); err != nil {
		return nil, &FileError{File: n.file, Line: n.line, Msg: kind + " does not decode: " + err.Error()}
	}
	meta := child(n.root, "metadata")
	return &Document{File: n.file, Line: n.line, APIVersion: scalar(n.root, "apiVersion"), Kind: kind,
		Name: scalar(meta, "name"), Namespace: scalar(meta, "namespace"), root: n.root}, nil
}
