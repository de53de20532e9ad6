package state

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// Admission is what would admit and place the pods of RayClusters read from files if they were
// applied now (doctor -f against a cluster): the ResourceQuotas and LimitRanges of the
// documents' namespaces, with Snapshot.Nodes then holding every node (TrimNodeForFit). Only that
// loader sets it; the admission rules are silent without it.
type Admission struct {
	Quotas      []corev1.ResourceQuota
	LimitRanges []corev1.LimitRange
	// Existing are the Ray objects the documents' namespaces already hold (RayObjectsGap when
	// they could not be listed): a document of one of their names changes it, and creates nothing
	// new but what the operator makes of the change.
	Existing []Existing
}

// Existing is a RayCluster, RayService or RayJob that exists where a document would be applied.
type Existing struct {
	Kind, Namespace, Name string
	// ActiveCluster: a RayService's active RayCluster.
	ActiveCluster string
	// Compared: for a RayService, the cluster KubeRay compares its spec with (the pending one
	// while an upgrade is under way, else the active one), when it exists.
	Compared *ray.ComparedCluster
}

// RayObjectsGap is Snapshot.Blind's resource when the documents' namespaces' Ray objects could not
// be listed: the admission rules then judge every document as new.
const RayObjectsGap = "rayclusters,rayservices,rayjobs"
