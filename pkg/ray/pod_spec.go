package ray

// Names in a Ray pod's spec that Ray, KubeRay or the cluster autoscaler read.

// AnnotationSafeToEvict is the cluster autoscaler's annotation that keeps it from draining a
// node for a pod: the voluntary disruption the kubelet's ranking does not cover.
const AnnotationSafeToEvict = "cluster-autoscaler.kubernetes.io/safe-to-evict"

// EnvGCSReconnectTimeout is how long a raylet waits for a lost GCS before it exits.
const EnvGCSReconnectTimeout = "RAY_gcs_rpc_server_reconnect_timeout_s"

// ShmPath is where Ray's object store lives on Linux.
const ShmPath = "/dev/shm"
