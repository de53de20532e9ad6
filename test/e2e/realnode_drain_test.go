package e2e

import (
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// realDrain drains the real node under the probe: the head of a RayCluster runs there
// in the stand-in image, which ignores SIGTERM as Ray does as PID 1, with a grace period of 5 s.
// A real PodDisruptionBudget over the head refuses first (the API server's 429, the disruption
// controller's count), then the drain evicts it, and the real kubelet's graceful termination takes
// the whole grace period before the pod is gone. The probe reaches the stand-in's Serve proxy
// (port 8000) on the real node through the real kubelet's port-forward. After the run the node is
// uncordoned and KubeRay's new head runs on it again. About 60 s.
func realDrain(t *testing.T, sb *sandbox.Sandbox) {
	h := newHOn(t, sb)
	h.realNodeCalm()
	h.CreateRayCluster("rd", func(rc *rayv1.RayCluster) {
		onRealNode(rc)
		grace := int64(5)
		rc.Spec.HeadGroupSpec.Template.Spec.TerminationGracePeriodSeconds = &grace
	})
	head := h.WaitClusterRunning("rd", 2*time.Minute)
	// The sample's head Service has no serve port: a Service of the test's own selects the head's
	// Serve proxy.
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "rd-serve", Namespace: h.NS},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"ray.io/cluster": "rd", "ray.io/node-type": "head"},
			Ports: []corev1.ServicePort{{Name: "serve", Port: 8000, TargetPort: intstr.FromInt32(8000)}}}}
	if _, err := h.Kube.CoreV1().Services(h.NS).Create(h.Ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	args := []string{"chaos", "drain", sandbox.RealNodeName, "--service", "rd-serve", "--port", "8000", "--delete-emptydir-data",
		"--ignore-daemonsets", "--rate", "20/s", "--warmup", "2s", "-o", "json", "--yes"}

	// A real budget over the head: every eviction refused (429) until --timeout, exit 3 naming it.
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "rd-head", Namespace: h.NS},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ray.io/cluster": "rd", "ray.io/node-type": "head"}}}}
	if _, err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Create(h.Ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the disruption controller to count the head", 30*time.Second, func() (bool, error) {
		p, err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Get(h.Ctx, "rd-head", metav1.GetOptions{})
		return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy == 1 && p.Status.DisruptionsAllowed == 0, err
	})
	res := h.Run(append(args, "--after", "7s", "--timeout", "6s")...)
	if res.Code != 3 || !strings.Contains(res.Stderr, "PodDisruptionBudget rd-head") {
		t.Fatalf("drain of the real node against the head's budget: want exit 3 naming it, got %s", res)
	}
	r := parseDrainReport(t, res)
	if row := drainRow(r, head.Name); row == nil || row.Outcome != "refused" || !r.Drain.Uncordoned {
		t.Errorf("refused drain: want the head refused and the node uncordoned, got %+v", r.Drain)
	}
	notCordoned(h, sandbox.RealNodeName)
	if now := h.pod(head.Name); now == nil || now.UID != head.UID || now.DeletionTimestamp != nil {
		t.Fatalf("the budget's head was touched")
	}
	if err := h.Kube.PolicyV1().PodDisruptionBudgets(h.NS).Delete(h.Ctx, "rd-head", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// The drain: the head evicted; the kubelet sends SIGTERM, which the stand-in ignores, and
	// kills it once the 5 s grace period is over, so the pod is gone no sooner than 5 s after the
	// cordon. The probe's answers came from the real container.
	res = h.Run(append(args, "--after", "12s")...)
	save("drain-real-node.json", res.Stdout)
	if res.Code != 0 {
		t.Fatalf("drain of the real node: %s", res)
	}
	r = parseDrainReport(t, res)
	row := drainRow(r, head.Name)
	if row == nil || row.Outcome != "gone" || row.GoneMs == nil || *row.GoneMs < 4900 || !r.Drain.Uncordoned {
		t.Errorf("the head should be gone after its real grace period of 5 s, the node uncordoned: %+v", r.Drain)
	}
	if r.Totals.Status2xx == 0 {
		t.Errorf("no answer from the stand-in's Serve proxy on the real node: %+v", r.Totals)
	}
	notCordoned(h, sandbox.RealNodeName)
	if ev := h.podEvents(head.Name, "Killing"); len(ev) == 0 {
		t.Errorf("no Killing event from the real kubelet for %s", head.Name)
	}
	newHead := h.WaitClusterRunning("rd", 2*time.Minute)
	if newHead.Name == head.Name || newHead.Spec.NodeName != sandbox.RealNodeName {
		t.Errorf("new head %s on %s, want a new pod on %s", newHead.Name, newHead.Spec.NodeName, sandbox.RealNodeName)
	}
	t.Logf("real drain: head gone %.0f ms after the cordon; %d requests, %d errors", *row.GoneMs, r.Totals.Requests, r.Totals.Errors)
	h.removeFromRealNode("rd")
}

// drainRow is the report's row for pod (by name), nil when absent.
func drainRow(r *drainReport, pod string) *struct {
	Pod, Outcome, RefusedBy string
	Ray                     bool
	Refusals                int
	GoneMs                  *float64
} {
	for i := range r.Drain.Pods {
		if strings.HasSuffix(r.Drain.Pods[i].Pod, "/"+pod) {
			return &r.Drain.Pods[i]
		}
	}
	return nil
}
