package manifest

import (
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// Snapshot is the set as doctor's rules read it, with the documents that name no namespace in
// namespace. A RayService or a RayJob brings the RayCluster the operator would make of its
// cluster spec, owned by it, so that every rule about a cluster's spec runs on it too: its name
// is the owner's (the operator adds a suffix of its own), or the owner's with "-raycluster" when
// a RayCluster document has that name.
func (s *Set) Snapshot(namespace string, now time.Time) *state.Snapshot {
	snap := &state.Snapshot{Now: now, Secrets: redact.Set{}}
	ns := func(d *Document) string {
		if d.Namespace != "" {
			return d.Namespace
		}
		return namespace
	}
	s.made = map[string]*Document{}
	taken := map[string]bool{}
	for _, rc := range s.clusters {
		c := *rc.DeepCopy()
		c.Namespace = ns(s.docOf[rc])
		taken[c.Namespace+"/"+c.Name] = true
		snap.Secrets.AddClusterSpec(&c.Spec)
		snap.Clusters = append(snap.Clusters, c)
		snap.NetworkPolicies = append(snap.NetworkPolicies, ray.NetworkPoliciesKubeRayMakes(&c, s.docOf[rc].NetworkPolicy)...)
		declareGCSStore(snap, &c, s.docOf[rc].GCSStore)
		declareGated(snap, &c, s.docOf[rc].Gated)
	}
	owned := func(d *Document, spec *rayv1.RayClusterSpec) {
		name := d.Name
		if taken[ns(d)+"/"+name] {
			name += "-raycluster"
		}
		yes := true
		c := rayv1.RayCluster{
			TypeMeta: metav1.TypeMeta{APIVersion: rayv1.GroupVersion.String(), Kind: "RayCluster"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns(d),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: rayv1.GroupVersion.String(), Kind: d.Kind, Name: d.Name, Controller: &yes}}},
			Spec: *spec.DeepCopy(),
		}
		s.made[c.Namespace+"/"+c.Name] = d
		snap.Secrets.AddClusterSpec(&c.Spec)
		snap.Clusters = append(snap.Clusters, c)
		snap.NetworkPolicies = append(snap.NetworkPolicies, ray.NetworkPoliciesKubeRayMakes(&c, d.NetworkPolicy)...)
		declareGCSStore(snap, &c, d.GCSStore)
		declareGated(snap, &c, d.Gated)
	}
	for _, rs := range s.services {
		v := *rs.DeepCopy()
		v.Namespace = ns(s.docOf[rs])
		snap.Services = append(snap.Services, v)
		if u := s.docOf[rs].Undecoded; len(u) > 0 {
			if snap.Undecoded == nil {
				snap.Undecoded = map[string][]string{}
			}
			snap.Undecoded[state.UndecodedKey("RayService", v.Namespace, v.Name)] = u
		}
		owned(s.docOf[rs], &v.Spec.RayClusterSpec)
	}
	for _, rj := range s.jobs {
		j := *rj.DeepCopy()
		j.Namespace = ns(s.docOf[rj])
		snap.Jobs = append(snap.Jobs, j)
		if j.Spec.RayClusterSpec != nil {
			owned(s.docOf[rj], j.Spec.RayClusterSpec)
		}
	}
	for _, b := range s.budgets {
		pdb := *b.pdb.DeepCopy()
		pdb.Namespace = ns(b.doc)
		snap.PDBs = append(snap.PDBs, pdb)
	}
	for _, p := range s.policies {
		np := *p.policy.DeepCopy()
		np.Namespace = ns(p.doc)
		snap.NetworkPolicies = append(snap.NetworkPolicies, np)
	}
	s.namespace = namespace
	return snap
}

// declareGCSStore records what rc's document declares of an embedded GCS store.
func declareGCSStore(snap *state.Snapshot, rc *rayv1.RayCluster, d *ray.GCSStoreDecl) {
	if d == nil {
		return
	}
	if snap.GCSStoresDeclared == nil {
		snap.GCSStoresDeclared = map[string]ray.GCSStoreDecl{}
	}
	snap.GCSStoresDeclared[rc.Namespace+"/"+rc.Name] = *d
}

// declareGated records what rc's document declares that KubeRay v1.7.0 judges against its gates.
func declareGated(snap *state.Snapshot, rc *rayv1.RayCluster, d ray.GatedDecl) {
	if !d.Any() {
		return
	}
	if snap.GatedDeclared == nil {
		snap.GatedDeclared = map[string]ray.GatedDecl{}
	}
	snap.GatedDeclared[rc.Namespace+"/"+rc.Name] = d
}
