package ray

// AnnotationFTEnabled turns on GCS fault tolerance on a RayCluster (KubeRay's older switch;
// spec.gcsFaultToleranceOptions is the newer one).
const AnnotationFTEnabled = "ray.io/ft-enabled"

// What KubeRay writes on the clusters a RayJob makes (constructRayClusterForRayJob).
const (
	// AnnotationDisableProvisionedHeadRestart: KubeRay v1.6+ creates no new head for a
	// provisioned cluster that carries it with value "true"; RayJob's SidecarMode sets it
	// (kuberay #4234).
	AnnotationDisableProvisionedHeadRestart = "ray.io/disable-provisioned-head-restart"
	LabelOriginatedFromCRD                  = "ray.io/originated-from-crd"
	LabelOriginatedFromCRName               = "ray.io/originated-from-cr-name"
	LabelJobSubmissionMode                  = "ray.io/job-submission-mode"
)
