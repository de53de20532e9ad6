package diagnose

import (
	"fmt"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSubmitterPodSelector(t *testing.T) {
	job := func(name string, mode rayv1.JobSubmissionMode, st rayv1.JobDeploymentStatus) rayv1.RayJob {
		return rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: rayv1.RayJobSpec{SubmissionMode: mode},
			Status: rayv1.RayJobStatus{JobDeploymentStatus: st}}
	}
	jobs := []rayv1.RayJob{
		job("b", "", rayv1.JobDeploymentStatusRunning),
		job("a", rayv1.K8sJobMode, rayv1.JobDeploymentStatusInitializing),
		job("http", rayv1.HTTPMode, rayv1.JobDeploymentStatusRunning),
		job("sidecar", rayv1.SidecarMode, rayv1.JobDeploymentStatusRunning),
		job("done", rayv1.K8sJobMode, rayv1.JobDeploymentStatusComplete),
		job("b", "", rayv1.JobDeploymentStatusRunning), // the same name in another namespace
	}
	if got, want := SubmitterPodSelector(jobs), "batch.kubernetes.io/job-name in (a,b)"; got != want {
		t.Errorf("selector %q, want %q", got, want)
	}
	if got := SubmitterPodSelector(jobs[2:5]); got != "" {
		t.Errorf("no submitter at work, selector %q, want none (no LIST)", got)
	}
	var many []rayv1.RayJob
	for i := 0; i <= submitterSelectorMaxNames; i++ {
		many = append(many, job(fmt.Sprintf("j%03d", i), "", rayv1.JobDeploymentStatusRunning))
	}
	if got := SubmitterPodSelector(many); got != "batch.kubernetes.io/job-name" {
		t.Errorf("%d RayJobs: selector %q, want every Job pod", len(many), got)
	}
}
