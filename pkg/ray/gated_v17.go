package ray

// GatedDecl is what a cluster spec declares that KubeRay v1.7.0's validation judges against its
// alpha feature gates (off by default) or Ray's version, and that these API types drop: doctor -f
// reads it from the document. The operator refuses a cluster that declares one of these without
// its gate (controllers/ray/utils/validation.go, ValidateRayClusterSpec).
type GatedDecl struct {
	NetworkPolicy bool // spec.networkPolicy (gate RayClusterNetworkPolicy)
	TLS           bool // spec.tlsOptions (gate RayClusterMTLS)
	HistoryServer bool // spec.historyServerOptions (gate RayClusterHistoryServer)
	RocksDB       bool // gcsFaultToleranceOptions.backend rocksdb (gate GCSFaultToleranceEmbeddedStorage)
	// Priorities are the worker groups whose priority is set and not 0, in spec order: v1.7.0
	// accepts them only with Ray 2.56.0 or later and autoscaler v2.
	Priorities []GroupPriority
}

// GroupPriority is a worker group's priority (KubeRay v1.7.0).
type GroupPriority struct {
	Group    string
	Priority int32
}

// Any says whether d declares anything v1.7.0's validation judges.
func (d GatedDecl) Any() bool {
	return d.NetworkPolicy || d.TLS || d.HistoryServer || d.RocksDB || len(d.Priorities) > 0
}

// KubeRay v1.7.0's alpha feature gates that guard cluster spec fields, all off by default
// (pkg/features/features.go).
const (
	FeatureNetworkPolicy   = "RayClusterNetworkPolicy"
	FeatureMTLS            = "RayClusterMTLS"
	FeatureHistoryServer   = "RayClusterHistoryServer"
	FeatureEmbeddedGCSRock = "GCSFaultToleranceEmbeddedStorage"
)
