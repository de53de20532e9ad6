package diagnose

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// RuleHeadRestartDisabled: the operator will not create a new head for this cluster, by design.
const RuleHeadRestartDisabled = "head-restart-disabled"

func (ix *index) restartDisabled(c *clusterView) (string, bool) {
	return ray.HeadRestartDisabled(c.rc, ix.operators)
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
	if v, ok := c.rc.Annotations[ray.AnnotationDisableProvisionedHeadRestart]; ok {
		ev["annotation"] = ray.AnnotationDisableProvisionedHeadRestart + "=" + v
	}
	_, op := ix.operatorVerdict()
	ev["operator"] = op
	job := owningRayJob(c)
	if job != "" {
		ev["rayJob"] = job
	}
	if m := c.rc.Labels[ray.LabelJobSubmissionMode]; m != "" {
		ev["submissionMode"] = m
	}
	name := c.what()
	if c.owner == nil && job != "" {
		name += " (RayJob " + job + ")"
	}
	obj := state.ClusterRef(c.rc)
	msg := name + " has no head pod"
	if doomed != nil {
		obj = state.PodRef(doomed)
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
		" " + ray.AnnotationDisableProvisionedHeadRestart + "-) and KubeRay creates one, or delete the RayCluster"
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
	if c.rc.Labels[ray.LabelOriginatedFromCRD] == "RayJob" {
		return c.rc.Labels[ray.LabelOriginatedFromCRName]
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
