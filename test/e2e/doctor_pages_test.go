package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// More Ray pods than one page holds (kube.PageSize, 500): doctor reads them from the real API
// server's protobuf pages pod by pod, following its continue tokens, with the pages growing
// (kube.PodPageLimit), and counts every one. 600 extra workers are created beside the operator's
// with a scheduler no one runs, so they stay Pending where nothing acts on them: no scheduler,
// kubelet or pod GC. KubeRay v1.1.1 deletes surplus workers at its next reconcile unless the
// cluster autoscales (then only the autoscaler deletes, reconcilePods' "Case 2"), so the cluster
// turns in-tree autoscaling on. About 5 s.
func TestDoctorReadsPagesOfPods(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	h.CreateRayCluster("paged", func(rc *rayv1.RayCluster) {
		on := true
		rc.Spec.EnableInTreeAutoscaling = &on
	})
	var worker corev1.Pod
	h.WaitFor("the operator's worker", 90*time.Second, func() (bool, error) {
		ws := h.Pods("paged", "worker")
		if len(ws) == 1 {
			worker = ws[0]
		}
		return len(ws) == 1, nil
	})
	const extra = 600
	var wg sync.WaitGroup
	errs := make(chan error, extra)
	next := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				p := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("paged-extra-%03d", i), Namespace: h.NS, Labels: worker.Labels},
					Spec:       corev1.PodSpec{SchedulerName: "nobody", Containers: []corev1.Container{{Name: "ray-worker", Image: worker.Spec.Containers[0].Image}}},
				}
				if _, err := h.Kube.CoreV1().Pods(h.NS).Create(h.Ctx, p, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := 0; i < extra; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	d, res := h.doctorJSON("-n", h.NS, "--ray=false", "--fail-on", "never")
	if res.Code != 0 || len(d.Clusters) != 1 || len(d.Clusters[0].Groups) != 1 {
		t.Fatalf("doctor: %s", res)
	}
	if g := d.Clusters[0].Groups[0]; g.Pods != extra+1 || len(d.Clusters[0].Heads) != 1 {
		t.Fatalf("doctor counted %d pods in group %s and heads %v, want %d and one head", g.Pods, g.Name, d.Clusters[0].Heads, extra+1)
	}
}
