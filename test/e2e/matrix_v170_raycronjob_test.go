package e2e

import (
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// raycronjob-run: KubeRay v1.7.0's RayCronJob controller (feature gate RayCronJob, on in this
// sandbox) makes a RayJob from spec.jobTemplate at the next minute of "* * * * *", owned by the
// RayCronJob and labelled with its name. The namespace's ResourceQuota of no pods keeps its
// cluster headless, so the real operator fails the run at activeDeadlineSeconds (5 s). doctor
// names the RayCronJob and the tick, and sends the fix to the RayCronJob's template: the run is
// never retried, the next tick copies the template. Nothing is played. Up to 60 s for the tick
// and about 10 s more.
func matrixRayCronJobRun(t *testing.T, h *H, v kubeRayVersion) {
	h.podQuota("no-pods", 0)
	deadline := int32(5)
	tmpl := rayv1.RayJobSpec{Entrypoint: "python -c 'print(1)'", RayClusterSpec: &h.sampleCluster("x").Spec, ActiveDeadlineSeconds: &deadline}
	m := map[string]any{"apiVersion": "ray.io/v1", "kind": "RayCronJob", "metadata": map[string]any{"name": "nightly"},
		"spec": map[string]any{"schedule": "* * * * *", "jobTemplate": objectMap(t, "RayJob", tmpl)}}
	jt := m["spec"].(map[string]any)["jobTemplate"].(map[string]any)
	delete(jt, "apiVersion")
	delete(jt, "kind")
	h.createJSON(mustJSON(t, m))
	// The next tick's RayJob, failed by its deadline.
	var job rayv1.RayJob
	h.WaitFor("the RayCronJob's first run to fail", 120*time.Second, func() (bool, error) {
		l, err := h.Ray.RayV1().RayJobs(h.NS).List(h.Ctx, metav1.ListOptions{LabelSelector: "ray.io/cronjob-name=nightly"})
		if err != nil || len(l.Items) == 0 {
			return false, err
		}
		job = l.Items[0]
		return job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed, nil
	})
	// Stop the ticks: a second run would only repeat the first.
	dyn, err := dynamic.NewForConfig(h.SB.Admin)
	if err != nil {
		t.Fatal(err)
	}
	rayCronJobs := schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "raycronjobs"} // v1.7.0's: not in the plugin's API types
	if _, err := dyn.Resource(rayCronJobs).Namespace(h.NS).Patch(h.Ctx, "nightly", types.MergePatchType, []byte(`{"spec":{"suspend":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if job.Status.Reason != rayv1.DeadlineExceeded {
		t.Fatalf("KubeRay %s failed the RayCronJob's run with %q (%s), want DeadlineExceeded", v.version, job.Status.Reason, job.Status.Message)
	}
	tick := job.Annotations["ray.io/cronjob-scheduled-timestamp"]
	d, res := h.doctorJSON("--operator-grace", "1s")
	f := d.finding(t, job.Status.RayClusterName, "rayjob-failed")
	wantContains(t, "message", f.Message, "RayJob "+h.NS+"/"+job.Name+" (RayCronJob nightly's run for "+tick+") Failed",
		"it ran past spec.activeDeadlineSeconds (5s)")
	wantContains(t, "remedy", f.Remedy, "in RayCronJob nightly's spec.jobTemplate, which each run copies (kubectl edit raycronjob nightly -n "+h.NS+")",
		"this run is not run again")
	if f.Evidence["rayCronJob"] != "nightly" || f.Evidence["scheduledFor"] != tick || tick == "" || res.Code != 1 {
		t.Errorf("evidence %v (tick %q), exit %d\n%s", f.Evidence, tick, res.Code, res)
	}
	// doctor raycronjob/nightly checks the RayJobs it made, and their clusters.
	d, res = h.doctorJSON("raycronjob/nightly", "--operator-grace", "1s")
	if f := d.finding(t, job.Status.RayClusterName, "rayjob-failed"); f.Evidence["rayCronJob"] != "nightly" || res.Code != 1 {
		t.Errorf("doctor raycronjob/nightly: want the run's rayjob-failed, exit 1\n%s", res)
	}
}
