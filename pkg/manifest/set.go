package manifest

import (
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"go.yaml.in/yaml/v3"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// The rules about a document's text, which only the reader sees: the typed objects no longer
// hold what they were written as. They are in diagnose's Catalog like every rule.
const (
	RuleUnknownField        = diagnose.RuleManifestUnknownField
	RuleStartParamNotString = diagnose.RuleManifestStartParamNotString
)

// Document is one RayCluster, RayService or RayJob read from a file.
type Document struct {
	File string
	Line int
	// APIVersion, Kind, Namespace and Name as written; Namespace is "" when the document
	// names none (it goes to the namespace doctor runs in, as kubectl apply puts it).
	APIVersion, Kind, Namespace, Name string
	// Undecoded are the fields of the document the typed object does not hold (those KubeRay
	// APITypesVersion's types lack), as paths: what is judged of the typed object misses them.
	Undecoded []string
	// NetworkPolicy is its cluster spec's networkPolicy (KubeRay v1.7.0), which the typed object
	// cannot hold: Snapshot adds the policies KubeRay would make of it.
	NetworkPolicy *ray.NetworkPolicyConfig
	// GCSStore is what its cluster spec's gcsFaultToleranceOptions declares of an embedded
	// (RocksDB) GCS store (KubeRay v1.7.0), which the typed object drops; nil for none.
	GCSStore *ray.GCSStoreDecl
	// Gated is what its cluster spec declares that KubeRay v1.7.0 judges against its feature
	// gates or Ray's version (spec-refused), which the typed object drops.
	Gated ray.GatedDecl
	root  *yaml.Node
}

// Note is what the reader saw in a document's text that the typed object cannot show: a field
// the kind does not have, a start parameter that is not a string.
type Note struct {
	Doc     *Document
	Rule    string
	Field   string
	Message string
	Remedy  string
}

// Set is everything Read read.
type Set struct {
	// Files is how many files were read (stdin counts as one).
	Files int
	// Documents are the Ray documents, in the order read.
	Documents []*Document
	// Skipped counts the other documents by kind: kubectl apply would apply them, doctor has no
	// rule about them.
	Skipped map[string]int
	// Errors are the files that could not be read or do not parse (FileError).
	Errors []error
	Notes  []Note

	clusters []*rayv1.RayCluster
	services []*rayv1.RayService
	jobs     []*rayv1.RayJob
	docOf    map[any]*Document
	// budgets are the PodDisruptionBudget documents: not Ray documents, but budget-never-allows
	// judges their shape against the Ray documents' pods.
	budgets []budgetDoc
	// policies are the NetworkPolicy documents, which network-policy-blocks-dns judges the same way.
	policies []policyDoc

	// made maps the RayClusters Snapshot made of RayService and RayJob documents to them, and
	// namespace is where Snapshot put the documents that name none.
	made      map[string]*Document
	namespace string
}

// addAll adds the objects of one file, or none of them: a file with one bad document is not
// checked at all, so that its findings never describe half a file.
func (s *Set) addAll(nodes []node) error {
	var ds []*decoded
	var budgets []budgetDoc
	var policies []policyDoc
	skipped := map[string]int{}
	for _, n := range nodes {
		d, other, err := decode(n)
		if err != nil {
			return err
		}
		if b, ok, err := decodeBudget(n, other); err != nil {
			return err
		} else if ok {
			budgets = append(budgets, b)
			continue
		}
		if p, ok, err := decodeNetworkPolicy(n, other); err != nil {
			return err
		} else if ok {
			policies = append(policies, p)
			continue
		}
		if d == nil {
			skipped[other]++
			continue
		}
		ds = append(ds, d)
	}
	for k, n := range skipped {
		s.Skipped[k] += n
	}
	s.budgets = append(s.budgets, budgets...)
	s.policies = append(s.policies, policies...)
	if s.docOf == nil {
		s.docOf = map[any]*Document{}
	}
	for _, d := range ds {
		s.Documents = append(s.Documents, d.doc)
		s.Notes = append(s.Notes, d.notes...)
		s.docOf[d.obj] = d.doc
		switch o := d.obj.(type) {
		case *rayv1.RayCluster:
			s.clusters = append(s.clusters, o)
		case *rayv1.RayService:
			s.services = append(s.services, o)
		case *rayv1.RayJob:
			s.jobs = append(s.jobs, o)
		}
	}
	return nil
}

// SkippedCount is how many documents of other kinds were skipped.
func (s *Set) SkippedCount() int {
	n := 0
	for _, c := range s.Skipped {
		n += c
	}
	return n
}

// Empty: no Ray document was read. doctor says so as an error, never "0 clusters healthy".
func (s *Set) Empty() bool { return len(s.Documents) == 0 }

func (d *Document) String() string { return fmt.Sprintf("%s:%d", d.File, d.Line) }
