// Package rayapi is what Ray's own dashboard says about a cluster, read only: the GCS's health,
// Ray's version, its node table, the Serve applications and the Ray jobs. Read fetches them
// over any HTTP base URL (doctor's is a port-forward to the head, opened by pkg/kube); the
// decoders turn the dashboard's JSON into the plain types below, which pkg/diagnose compares
// with the Kubernetes view. Nothing here submits, stops or deletes anything in Ray.
package rayapi

import "time"

// View is what one RayCluster's head dashboard said during one doctor run.
type View struct {
	Namespace, Cluster string
	// Head is the pod whose dashboard was read; Port its dashboard port.
	Head string
	Port int

	// Unreachable, when set, is why nothing could be read: nothing is then claimed about Ray's
	// health (a dashboard that refused a read may have answered its health check first).
	Unreachable *Unreachable

	// Auth is how the head's Ray asks to be called ("" none, "token", "k8s"), and TokenFrom
	// where the token sent was read ("secret NAME key KEY", "the pod spec"): never the token.
	Auth, TokenFrom string

	// GCSAlive is what /api/gcs_healthz said; GCSMessage the dashboard's words when not alive.
	GCSAlive   bool
	GCSMessage string
	// Version is the head's Ray version (/api/version), "" when not read.
	Version string
	// Nodes is Ray's node table (/api/v0/nodes), alive and dead; NodesRead says it was read.
	Nodes     []Node
	NodesRead bool
	// Apps are the Serve applications (/api/serve/applications/); AppsRead says they were
	// read (a cluster without Serve answers with none).
	Apps     []App
	AppsRead bool
	// Jobs are Ray's jobs (/api/jobs/); JobsRead says they were read.
	Jobs     []Job
	JobsRead bool
	// Demands and PendingLaunches are the autoscaler's view (/api/cluster_status): resource
	// requests waiting, and nodes it is launching by type. AutoscalerRead says the autoscaler
	// reported (a cluster without KubeRay's in-tree autoscaler has none).
	Demands         []Demand
	PendingLaunches map[string]int
	AutoscalerRead  bool

	// Failed lists the reads that failed while others answered, one line each
	// ("GET /api/v0/nodes: HTTP 500 ..."): what was not seen.
	Failed []string

	// Answers are the dashboard's answers as they came, in the order asked, when the reader
	// was asked to keep them (ReadKeeping: a bundle saves them, and doctor --from replays them
	// through Replay); empty otherwise.
	Answers []Answer
}

// Answer is one read of a dashboard: the path asked, and the HTTP status and body (at most
// maxBody bytes), or why no answer came.
type Answer struct {
	Path        string
	Code        int
	Body        []byte
	Unreachable *Unreachable
}

// Reason says why a dashboard could not be read.
type Reason string

const (
	NoHead      Reason = "no-head"     // no head pod is Running and Ready to forward to
	Forbidden   Reason = "forbidden"   // RBAC refused the port-forward (create pods/portforward)
	Timeout     Reason = "timeout"     // the port-forward or the dashboard did not answer in time
	HTTPError   Reason = "http-error"  // the dashboard answered, with an error status
	Unconnected Reason = "unconnected" // the port-forward failed, or nothing listens on the port
	Deadline    Reason = "deadline"    // the run's total deadline passed before this cluster's turn
	// The reasons of Ray's token authentication: RBAC refused the read of the token's Secret
	// (get secrets), the token could not be had (its Secret or key missing, a source not read,
	// Kubernetes token mode), or the dashboard refused the request (HTTP 401 or 403).
	TokenForbidden Reason = "token-forbidden"
	NoToken        Reason = "no-token"
	Refused        Reason = "refused"
)

// AuthReason reports whether r is one of token authentication's.
func AuthReason(r Reason) bool { return r == TokenForbidden || r == NoToken || r == Refused }

// Unreachable is why a dashboard could not be read.
type Unreachable struct {
	Reason Reason `json:"reason"`
	Detail string `json:"detail"` // one line, for the finding's message
}

// Node is one row of Ray's node table.
type Node struct {
	ID     string
	IP     string // the node's IP: on KubeRay, its pod's IP
	Head   bool
	State  string // ALIVE or DEAD
	Detail string // Ray's state message (why it is dead), may be ""
	Name   string
}

// Alive reports whether Ray counts the node as alive.
func (n Node) Alive() bool { return n.State == "ALIVE" }

// App is one Serve application.
type App struct {
	Name, Status, Message string
	// LastDeployed is when it was last deployed (last_deployed_time_s); zero when unknown.
	LastDeployed time.Time
	Deployments  []Deployment
}

// Deployment is one deployment of a Serve application.
type Deployment struct {
	Name, Status, Message string
	// Replicas are its replicas and where Ray placed them (Ray 2.7 and later list them).
	Replicas []Replica
}

// Replica is one replica of a Serve deployment: its actor, its state (STARTING, UPDATING,
// RECOVERING, RUNNING, STOPPING) and the Ray node it runs on. On KubeRay a Ray node is a pod, and
// its node IP is the pod's IP: that is how chaos worker-kill --serve-replicas finds the pods.
type Replica struct {
	ID, State      string
	NodeID, NodeIP string
}

// Job is one Ray job.
type Job struct {
	SubmissionID, JobID, Status, Message, ErrorType string
	End                                             time.Time
}

// Demand is one shape of resource request Ray's autoscaler has waiting (tasks, actors or
// placement group bundles), and how many wait for it.
type Demand struct {
	Resources map[string]float64
	Count     int
}
