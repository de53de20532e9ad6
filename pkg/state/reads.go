package state

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Reads is what the rules read of the objects no server-side selector picks alone, handed to the
// loaders by the commands (diagnose.Reads) so that pkg/load lists no more than the rules need and
// knows no rule. A nil field keeps nothing of its kind (Checked: every cluster).
type Reads struct {
	// KeepEvent keeps the Events about RayClusters the rules read (a head's lifecycle, the
	// operator's refusals) of those ray.EventFieldSelector lists.
	KeepEvent func(*corev1.Event) bool
	// KeepWarning keeps the operator's Warnings about RayJobs and RayServices the rules read, of
	// those ray.WarningFieldSelector lists.
	KeepWarning func(*corev1.Event) bool
	// SubmitterPods is the label selector of the submitter pods of jobs worth listing, "" for none.
	SubmitterPods func(jobs []rayv1.RayJob) string
	// Checked says which RayClusters of s doctor checks for target t (nil: all of them).
	Checked func(s *Snapshot, t *ray.Target) func(*rayv1.RayCluster) bool
}

// Keeps applies keep, a Reads filter that may be nil (keep nothing).
func Keeps(keep func(*corev1.Event) bool, ev *corev1.Event) bool { return keep != nil && keep(ev) }
