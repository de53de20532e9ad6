package diagnose

import (
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

// RuleHeadRestartDisabled: the operator will not create a new head for this cluster, by design.
const RuleHeadRestartDisabled = "head-restart-disabled"

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

var (
	// RestartAnnotationVersion is the first release whose reconcilePods honours
	// AnnotationDisableProvisionedHeadRestart (shouldSkipHeadPodRestart, kuberay #4234).
	RestartAnnotationVersion = version.MustParseSemantic("v1.6.0")
	// rayJobNoRestartVersion: v1.5.x skips the head of every provisioned RayJob cluster,
	// whatever its submission mode (kuberay #4141, #4156; called a breaking change in #4176).
	rayJobNoRestartVersion = version.MustParseSemantic("v1.5.0")
)

// HeadRestartDisabled reports whether the running operators create no new head for rc once its
// head is gone, and why. It reads what reconcilePods reads: the RayClusterProvisioned condition,
// the annotation (v1.6+) or, on v1.5.x, the RayJob origin label. An operator whose version
// cannot be read is taken to honour the annotation: it is the cluster owner's stated intent.
func HeadRestartDisabled(rc *rayv1.RayCluster, ops []Operator) (why string, disabled bool) {
	if !meta.IsStatusConditionTrue(rc.Status.Conditions, string(rayv1.RayClusterProvisioned)) {
		return "", false // not provisioned yet: every version creates the head
	}
	annotated := rc.Annotations[AnnotationDisableProvisionedHeadRestart] == "true"
	fromJob := rc.Labels[LabelOriginatedFromCRD] == "RayJob"
	known := false
	for _, op := range ops {
		if op.ReadyReplicas == 0 {
			continue
		}
		v, err := version.ParseSemantic(op.Version)
		if err != nil {
			continue
		}
		known = true
		switch {
		case annotated && !v.LessThan(RestartAnnotationVersion):
			return fmt.Sprintf("KubeRay %s creates no new head for a provisioned RayCluster annotated %s=true (kuberay #4234)",
				op.Version, AnnotationDisableProvisionedHeadRestart), true
		case fromJob && !v.LessThan(rayJobNoRestartVersion) && v.LessThan(RestartAnnotationVersion):
			return fmt.Sprintf("KubeRay %s creates no new head for a provisioned RayCluster made by a RayJob (label %s=RayJob; kuberay #4141, narrowed to SidecarMode in v1.6.0 by #4234)",
				op.Version, LabelOriginatedFromCRD), true
		}
	}
	if annotated && !known {
		return fmt.Sprintf("the RayCluster is annotated %s=true: KubeRay v1.6+ creates no new head once it is provisioned (kuberay #4234)",
			AnnotationDisableProvisionedHeadRestart), true
	}
	return "", false
}

// restartDisabled is HeadRestartDisabled for a cluster of the snapshot.
func (ix *index) restartDisabled(c *clusterView) (string, bool) {
	return HeadRestartDisabled(c.rc, ix.operators)
}

// headRestartDisabled: the head is gone, or the operator is about to delete it, and by design
// nothing creates a new one. Said instead of head-missing, head-evicted and head-terminated,
// whose remedies (start the operator, heal) would be wrong here.
func headRestartDisabled(ix *index, c *clusterView) []Finding {
	if c.suspended() || c.rc.DeletionTimestamp != nil {
		return nil
	}
	why, off := ix.restartDisabled(c)
	if !off {
		return nil
	}
	live := c.liveHeads()
	var doomed *corev1.Pod
	for _, p := range live {
		if ray.Terminal(p) || rayContainerEnded(p) {
			doomed = p
		}
	}
	if len(live) > 0 && doomed == nil {
		return nil // a head that runs, or that the operator leaves alone (pending, crash-looping)
	}
	if len(live) == 0 && len(c.heads) > 0 {
		return nil // the last head is being deleted; head-terminating-stuck watches it
	}
	ev := map[string]string{"provisioned": "True"}
	if v, ok := c.rc.Annotations[AnnotationDisableProvisionedHeadRestart]; ok {
		ev["annotation"] = AnnotationDisableProvisionedHeadRestart + "=" + v
	}
	_, op := ix.operatorVerdict()
	ev["operator"] = op
	job := owningRayJob(c)
	if job != "" {
		ev["rayJob"] = job
	}
	if m := c.rc.Labels[LabelJobSubmissionMode]; m != "" {
		ev["submissionMode"] = m
	}
	name := c.what()
	if c.owner == nil && job != "" {
		name += " (RayJob " + job + ")"
	}
	obj := ClusterRef(c.rc)
	msg := name + " has no head pod"
	if doomed != nil {
		obj = PodRef(doomed)
		ev["pod"] = doomed.Name
		ev["phase"] = string(doomed.Status.Phase)
		msg = fmt.Sprintf("%s: head pod %s is %s; the operator deletes it", name, doomed.Name, podState(doomed))
		if rayContainerEnded(doomed) && !ray.Terminal(doomed) {
			msg = fmt.Sprintf("%s: the Ray container of head pod %s has exited under restartPolicy %s; the operator deletes the pod",
				name, doomed.Name, restartPolicy(doomed))
		}
	}
	msg += "; by design no new head will be created: " + why
	remedy := "nothing to heal: to get a head back, remove the annotation (kubectl annotate raycluster " + c.rc.Name + " -n " + c.rc.Namespace +
		" " + AnnotationDisableProvisionedHeadRestart + "-) and KubeRay creates one, or delete the RayCluster"
	if job != "" {
		remedy = "nothing to heal: RayJob " + job + " ran on this cluster and fails without its head (kubectl get rayjob " + job + " -n " + c.rc.Namespace +
			"); to run the job again, submit the RayJob again; delete the RayCluster if the RayJob leaves it behind"
	}
	f := c.finding(RuleHeadRestartDisabled, obj, msg, remedy, ev)
	f.Facts.Operator = op
	return []Finding{f}
}

// owningRayJob names the RayJob that made the cluster: its owner, or the origin labels KubeRay
// writes (an owner reference can be missing on clusters restored from backups).
func owningRayJob(c *clusterView) string {
	if c.owner != nil && c.owner.Kind == "RayJob" {
		return c.owner.Name
	}
	if c.rc.Labels[LabelOriginatedFromCRD] == "RayJob" {
		return c.rc.Labels[LabelOriginatedFromCRName]
	}
	return ""
}

// rayContainerEnded: the Ray container (the first one, as KubeRay's getRayContainerStateTerminated
// reads it) has terminated in a Running pod whose restartPolicy is Never; every KubeRay version
// deletes such a head (shouldDeletePod).
func rayContainerEnded(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || restartPolicy(p) != corev1.RestartPolicyNever || len(p.Spec.Containers) == 0 {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == p.Spec.Containers[0].Name {
			return cs.State.Terminated != nil
		}
	}
	return false
}
