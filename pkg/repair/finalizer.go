package repair

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// EventReasonFinalizer is the reason of the Event heal records when it removes KubeRay's Redis
// cleanup finalizer from a RayCluster.
const EventReasonFinalizer = "RayGCSFTFinalizerRemoved"

// Removed: the finalizer was removed.
const Removed Result = "removed"

// FinalizerRemoval is one removal of ray.io/gcs-ft-redis-cleanup-finalizer from a RayCluster
// being deleted (rule gcs-ft-finalizer-stuck, only with RemoveGCSFTFinalizer). The patch
// carries the uid, resourceVersion and index heal saw as JSON patch tests.
type FinalizerRemoval struct {
	Rule            string    `json:"rule"`
	Cluster         state.Ref `json:"cluster"`
	ResourceVersion string    `json:"resourceVersion"`
	Finalizer       string    `json:"finalizer"`
	Index           int       `json:"index"`
	// StorageNamespace is the cluster's GCS data in Redis that nobody will clean up any more.
	StorageNamespace string `json:"storageNamespace"`
	// LeftBehind is the warning printed before and after the removal.
	LeftBehind string `json:"leftBehind"`
}

// FinalizerRemover removes one finalizer from a RayCluster only while it is the object that was
// seen (Conflict otherwise, NotFound when it is gone).
type FinalizerRemover interface {
	RemoveRayClusterFinalizer(ctx context.Context, namespace, name string, uid types.UID, resourceVersion string, index int, finalizer string, dryRun bool) error
}

// FinalizerOutcome is what became of one FinalizerRemoval.
type FinalizerOutcome struct {
	Removal      FinalizerRemoval `json:"removal"`
	Result       Result           `json:"result"`
	Message      string           `json:"message"`
	At           time.Time        `json:"at"`
	EventProblem string           `json:"eventProblem,omitempty"`
	Err          error            `json:"-"`
}

// planFinalizer turns a gcs-ft-finalizer-stuck finding into a removal when opts ask for it, and
// into a Skip saying how otherwise.
func (ix *index) planFinalizer(f diagnose.Finding, opts Options) (*FinalizerRemoval, *Skip) {
	skip := func(why string) (*FinalizerRemoval, *Skip) {
		return nil, &Skip{Rule: f.Rule, Cluster: f.Cluster, Object: f.Object, Why: why}
	}
	rc := ix.clusters[types.NamespacedName{Namespace: f.Cluster.Namespace, Name: f.Cluster.Name}]
	if rc == nil || (f.Cluster.UID != "" && string(rc.UID) != f.Cluster.UID) {
		return skip("the RayCluster is not in the snapshot any more")
	}
	index := -1
	for i, fz := range rc.Finalizers {
		if fz == ray.FinalizerGCSFTRedisCleanup {
			index = i
		}
	}
	if rc.DeletionTimestamp == nil || index < 0 {
		return skip("the RayCluster is not being deleted with the finalizer " + ray.FinalizerGCSFTRedisCleanup)
	}
	ns := ray.StorageNamespace(rc)
	left := fmt.Sprintf("the GCS data of storage namespace %s stays in Redis (gcsFaultToleranceOptions.redisAddress or RAY_REDIS_ADDRESS of the cluster): delete its keys there", ns)
	if f.Facts.CleanupJobComplete {
		left = "the cleanup Job completed: nothing of storage namespace " + ns + " is left in Redis"
	}
	if !opts.RemoveGCSFTFinalizer {
		return skip("heal removes KubeRay's Redis cleanup finalizer only with " + opts.name(SetRemoveGCSFTFinalizer) + "; removing it: " + left)
	}
	return &FinalizerRemoval{
		Rule:             f.Rule,
		Cluster:          state.ClusterRef(rc),
		ResourceVersion:  rc.ResourceVersion,
		Finalizer:        ray.FinalizerGCSFTRedisCleanup,
		Index:            index,
		StorageNamespace: ns,
		LeftBehind:       left,
	}, nil
}

// removeFinalizer applies one removal and records an Event on the RayCluster.
func (e *Executor) removeFinalizer(ctx context.Context, r FinalizerRemoval) FinalizerOutcome {
	c := r.Cluster.Namespace + "/" + r.Cluster.Name
	err := e.Finalizers.RemoveRayClusterFinalizer(ctx, r.Cluster.Namespace, r.Cluster.Name, types.UID(r.Cluster.UID), r.ResourceVersion, r.Index, r.Finalizer, e.DryRun)
	o := FinalizerOutcome{Removal: r, At: e.now(), Err: err}
	switch {
	case err == nil && e.DryRun:
		o.Result = DryRun
		o.Message = fmt.Sprintf("would remove finalizer %s from RayCluster %s; server-side dry run accepted, nothing changed; %s", r.Finalizer, c, r.LeftBehind)
	case err == nil:
		o.Result = Removed
		o.Message = fmt.Sprintf("removed finalizer %s from RayCluster %s; %s", r.Finalizer, c, r.LeftBehind)
	case apierrors.IsConflict(err):
		o.Result = Failed
		o.Message = fmt.Sprintf("RayCluster %s changed since it was seen (resourceVersion %s); finalizer not removed; run heal again", c, r.ResourceVersion)
		return o
	case apierrors.IsNotFound(err):
		o.Result = Gone
		o.Message = fmt.Sprintf("RayCluster %s is already gone; nothing removed", c)
		return o
	default:
		o.Result = Failed
		o.Message = fmt.Sprintf("finalizer of RayCluster %s not removed: %v", c, err)
		return o
	}
	if err := e.Events.CreateEvent(ctx, finalizerEvent(r, o.At, e.DryRun), e.DryRun); err != nil {
		o.EventProblem = "Event not recorded: " + err.Error()
	}
	return o
}

func finalizerEvent(r FinalizerRemoval, at time.Time, dryRun bool) *corev1.Event {
	verb := "removed"
	if dryRun {
		verb = "would have removed (dry run)"
	}
	msg := fmt.Sprintf("kubectl-ray heal %s finalizer %s for rule %s; %s", verb, r.Finalizer, r.Rule, r.LeftBehind)
	return newEvent(clusterEventRef(r.Cluster, r.ResourceVersion), nil, corev1.EventTypeWarning, EventReasonFinalizer, "RemoveFinalizer", msg, at)
}
