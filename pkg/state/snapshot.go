// Package state is the snapshot of cluster state that doctor's rules read, heal's plans act on and
// a bundle keeps: plain data, read once by the loaders (pkg/load, the bundle reader, doctor -f),
// with nothing of the rules in it, so that what only reads or writes a snapshot need not know
// the rules.
//
// The trimming of what a loader lists (trim.go, intern.go) lives here, beside the data it
// shrinks, and not in pkg/load: the bundle reader trims the Events it reads back as the API
// loader trims them as they arrive, and the rule and plan tests trim their fixtures to prove that
// no rule or plan reads what is dropped; pkg/load imports the rules' event filters, so those
// tests could not import it.
package state

import (
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/rayapi"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// Snapshot is everything doctor looked at, read once (one paged LIST per kind).
type Snapshot struct {
	// Now is when the snapshot was taken; ages and grace periods are measured from it.
	Now time.Time

	Clusters []rayv1.RayCluster
	Services []rayv1.RayService
	Jobs     []rayv1.RayJob
	// JobsNewer are, by namespace/name, the fields of Jobs that KubeRay releases newer than
	// these API types write (ray.RayJobNewer): the typed RayJobs drop them. RayJobs without any
	// have no entry.
	JobsNewer map[string]ray.RayJobNewer
	// CronJobs are KubeRay v1.7.0's RayCronJobs (feature gate RayCronJob), their managedFields
	// dropped; none where the API has no such kind.
	CronJobs []ray.RayCronJob
	// Gateways and HTTPRoutes are the Gateway API's, listed only where a RayService upgrades with
	// NewClusterWithIncrementalUpgrade (KubeRay makes one of each for it). NoGatewayAPI is set
	// when that LIST found no such kind: the cluster has no Gateway API CRDs.
	Gateways     []ray.Gateway
	HTTPRoutes   []ray.HTTPRoute
	NoGatewayAPI bool
	Pods         []corev1.Pod     // Ray pods only (label ray.io/is-ray-node=yes)
	Nodes        []corev1.Node    // the nodes Ray pods run on, when nodes could be listed
	Serve        []corev1.Service // Services of RayServices (the serve and head services)
	Deployments  []appsv1.Deployment
	// ServeEndpoints are the EndpointSlices of the serve Services (they carry the Service's
	// ray.io/serve label), when EndpointSlices could be listed.
	ServeEndpoints []discoveryv1.EndpointSlice
	// CleanupJobs are KubeRay's Redis cleanup Jobs (label ray.io/node-type=redis-cleanup), trimmed
	// by TrimJob, when Jobs could be listed.
	CleanupJobs []batchv1.Job
	// SubmitterPods are the pods of the submitter Jobs of RayJobs in K8sJobMode that are still
	// Initializing or Running (label batch.kubernetes.io/job-name: the Job controller's; KubeRay
	// puts no label of its own on them), trimmed by TrimPod. Listed only when such a RayJob
	// exists.
	SubmitterPods []corev1.Pod
	// PDBs are the PodDisruptionBudgets of the namespaces read (they carry no label to select
	// them by), when they could be listed; doctor -f reads those of its documents.
	PDBs []policyv1.PodDisruptionBudget
	// NetworkPolicies are the NetworkPolicies of the namespaces read, when they could be listed
	// (all of them: a namespace's default deny selects every pod, by no label); doctor -f has
	// those of its documents and those KubeRay would make of a RayCluster's spec.networkPolicy.
	NetworkPolicies []networkingv1.NetworkPolicy

	// Secrets holds the secret values of specs the loader trimmed away (TrimPod, TrimCluster),
	// so that the redactor still knows them.
	Secrets redact.Set

	// Events are the Events about RayClusters that tell a head's lifecycle (the operator's head
	// deletes and creates, heal's deletes), trimmed by TrimEvents as they arrive.
	Events []corev1.Event

	// ClustersSelected: the RayClusters were listed with a label selector (-l), RayJobs were not;
	// a RayJob is then checked only with its cluster.
	ClustersSelected bool

	// Ray is Ray's own view of the RayClusters doctor asked it about (doctor --ray): what each
	// head's dashboard said, or why it could not be read. RayAsked says Ray was asked at all;
	// without it, the rules that compare Ray's view with the pods stay silent.
	Ray      []rayapi.View
	RayAsked bool

	// GCSStoresDeclared, set by doctor -f only, are by namespace/cluster the embedded GCS stores
	// the documents' cluster specs declare (KubeRay v1.7.0's gcsFaultToleranceOptions.backend
	// rocksdb and storage.claimName), which the API types drop. Live, the head pods say it.
	GCSStoresDeclared map[string]ray.GCSStoreDecl
	// GatedDeclared, set by doctor -f only, are by namespace/cluster what the documents' cluster
	// specs declare that KubeRay v1.7.0 judges against its feature gates or Ray's version
	// (networkPolicy, tlsOptions, historyServerOptions, a RocksDB GCS store, worker-group
	// priority), which the API types drop.
	GatedDeclared map[string]ray.GatedDecl

	// Undecoded, set by doctor -f only, are by object ("RayService ml/svc") the fields of its
	// document that these API types do not hold: a judgement of the typed object that needs
	// them all (KubeRay's hash of a RayService's cluster spec) is not made.
	Undecoded map[string][]string

	// Admission, set by doctor -f against a cluster only, is what would admit and place the
	// documents' pods (quotas and limit ranges; Nodes are then every node): the admission rules
	// read it, and are silent without it.
	Admission *Admission

	// Blind lists what could not be read (RBAC or errors), so a report can say what it did not see
	// instead of claiming health it never checked.
	Blind []Gap
}

// Gap is one thing the snapshot could not see, and why.
type Gap struct {
	Resource string `json:"resource"`
	Reason   string `json:"reason"`
}

// CanSee reports whether resource (e.g. "nodes") was read.
func (s *Snapshot) CanSee(resource string) bool {
	for _, g := range s.Blind {
		if g.Resource == resource {
			return false
		}
	}
	return true
}

// UndecodedKey is Snapshot.Undecoded's key of an object: "RayService ml/svc".
func UndecodedKey(kind, namespace, name string) string { return kind + " " + namespace + "/" + name }
