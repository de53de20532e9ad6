package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// sandboxPlayedOperator starts a sandbox of the test's own with no KubeRay operator and KubeRay
// v1.5.0's CRDs (RayService conditions exist there; v1.1.1's CRD prunes them), stopped when the
// test ends. The tests on it play the operator's part through the API: the objects it creates
// and the status it writes. The scheduler, kwok (pods Running and Ready), the EndpointSlice
// controller and the Job controller are real.
func sandboxPlayedOperator(t *testing.T, name string) *sandbox.Sandbox {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sb, err := sandbox.Up(ctx, sandbox.Config{Dir: filepath.Join(env.work, "sandbox-"+name), Operator: sandbox.OperatorNone, Nodes: 1, DieWithParent: true}, os.Stderr)
	if err != nil {
		t.Fatalf("starting the sandbox without an operator: %v", err)
	}
	t.Cleanup(func() { _ = sb.Down() })
	return sb
}

// playRayService creates the RayService sample named name, tuned so that the older serve rules
// stay silent (num-cpus 0 on the head, GCS fault tolerance on, head excluded from the serve
// Service), and writes the status the RayService controller of KubeRay v1.3+ would write: active
// (and pending) cluster names, serviceStatus, and conditions with their transition times.
func (h *H) playRayService(name, active, pending string, ready bool, upgradeSince time.Time) *rayv1.RayService {
	h.T.Helper()
	data, err := os.ReadFile(h.SB.Config().SamplePath("ray-service.sample.yaml"))
	if err != nil {
		h.T.Fatal(err)
	}
	rs := &rayv1.RayService{}
	if err := yaml.Unmarshal(data, rs); err != nil {
		h.T.Fatal(err)
	}
	rs.Name, rs.Namespace = name, h.NS
	rs.Annotations = map[string]string{"ray.io/ft-enabled": "true"}
	rs.Spec.ExcludeHeadPodFromServeSvc = true
	rs.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams["num-cpus"] = "0"
	created, err := h.Ray.RayV1().RayServices(h.NS).Create(h.Ctx, rs, metav1.CreateOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	st := rayv1.RayServiceStatuses{
		ActiveServiceStatus:  rayv1.RayServiceStatus{RayClusterName: active},
		PendingServiceStatus: rayv1.RayServiceStatus{RayClusterName: pending},
	}
	readyCond := metav1.Condition{Type: string(rayv1.RayServiceReady), Status: metav1.ConditionFalse, Reason: string(rayv1.ZeroServeEndpoints),
		Message: "Number of serve endpoints dropped to 0", LastTransitionTime: metav1.NewTime(time.Now().Add(-10 * time.Minute))}
	if ready {
		st.ServiceStatus = rayv1.Running
		st.NumServeEndpoints = 1
		readyCond.Status, readyCond.Reason, readyCond.Message = metav1.ConditionTrue, string(rayv1.NonZeroServeEndpoints), "Number of serve endpoints is greater than 0"
	}
	upgrade := metav1.Condition{Type: string(rayv1.UpgradeInProgress), Status: metav1.ConditionFalse, Reason: string(rayv1.NoPendingCluster),
		Message: "Active Ray cluster exists and no pending Ray cluster", LastTransitionTime: metav1.NewTime(time.Now().Add(-10 * time.Minute))}
	if pending != "" {
		upgrade.Status, upgrade.Reason, upgrade.Message = metav1.ConditionTrue, string(rayv1.BothActivePendingClustersExist), "Both active and pending Ray clusters exist"
		upgrade.LastTransitionTime = metav1.NewTime(upgradeSince)
	}
	meta.SetStatusCondition(&st.Conditions, readyCond)
	meta.SetStatusCondition(&st.Conditions, upgrade)
	created.Status = st
	got, err := h.Ray.RayV1().RayServices(h.NS).UpdateStatus(h.Ctx, created, metav1.UpdateOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	for _, c := range []string{string(rayv1.RayServiceReady), string(rayv1.UpgradeInProgress)} {
		if meta.FindStatusCondition(got.Status.Conditions, c) == nil {
			h.T.Fatalf("RayService %s: condition %s was not stored (the CRD pruned it): the test would prove nothing", name, c)
		}
	}
	return got
}

// playCluster creates a RayCluster and the pods the RayCluster controller would create for it:
// a head and one worker whose ray.io/serve label is serve (the RayService controller sets it per
// pod after Serve's proxy health check). With schedulable false, the head asks for a node label no
// node has, so the real scheduler marks it Unschedulable. The cluster's HeadPodReady condition is
// written as the controller writes it.
func (h *H) playCluster(name, serve string, schedulable bool) {
	h.T.Helper()
	// As the RayService's spec has it (playRayService): no Serve replicas on the head.
	h.CreateRayCluster(name, func(rc *rayv1.RayCluster) {
		if rc.Spec.HeadGroupSpec.RayStartParams == nil {
			rc.Spec.HeadGroupSpec.RayStartParams = map[string]string{}
		}
		rc.Spec.HeadGroupSpec.RayStartParams["num-cpus"] = "0"
	})
	node := sandbox.NodeName(0)
	head := rayPod(name+"-head-x1", name, "head", node)
	if !schedulable {
		head.Spec.NodeName = ""
		head.Spec.NodeSelector = map[string]string{"example.com/gpu": "h100"}
	}
	worker := rayPod(name+"-worker-x1", name, "worker", node)
	worker.Labels[ray.LabelServe] = serve
	for _, p := range []*corev1.Pod{head, worker} {
		if _, err := h.Kube.CoreV1().Pods(h.NS).Create(h.Ctx, p, metav1.CreateOptions{}); err != nil {
			h.T.Fatal(err)
		}
	}
	rc, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	cond := metav1.Condition{Type: string(rayv1.HeadPodReady), Status: metav1.ConditionTrue, Reason: "HeadPodRunningAndReady", LastTransitionTime: metav1.Now()}
	if schedulable {
		rc.Status.State = rayv1.Ready
	} else {
		cond.Status, cond.Reason = metav1.ConditionFalse, "HeadPodNotFound"
	}
	meta.SetStatusCondition(&rc.Status.Conditions, cond)
	if _, err := h.Ray.RayV1().RayClusters(h.NS).UpdateStatus(h.Ctx, rc, metav1.UpdateOptions{}); err != nil {
		h.T.Fatal(err)
	}
}

// playServeService creates <rayservice>-serve-svc as every KubeRay release builds it
// (common.BuildServeService): the ray.io/serve label, selector cluster + ray.io/serve=true.
func (h *H) playServeService(rayService, cluster string) {
	h.T.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: rayService + "-serve-svc", Namespace: h.NS, Labels: map[string]string{
			"ray.io/originated-from-cr-name": rayService, "ray.io/originated-from-crd": "RayService", ray.LabelServe: rayService + "-serve"}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{ray.LabelCluster: cluster, ray.LabelServe: "true"},
			Ports:    []corev1.ServicePort{{Name: "serve", Port: 8000, TargetPort: intstr.FromInt32(8000)}},
		},
	}
	if _, err := h.Kube.CoreV1().Services(h.NS).Create(h.Ctx, svc, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
}

// rayservice-upgrade-stuck (kuberay #5088) and serve-no-endpoints (kuberay #5148), with no
// operator: the test plays the RayService and RayCluster controllers (objects, pods, labels,
// status with its conditions) through the API. The UpgradeInProgress transition times are
// played as the operator would have written them when the upgrade began: 30 minutes ago for the
// stuck upgrade, 1 minute ago for the young one. The scheduler (Unschedulable), kwok (Ready pods)
// and the EndpointSlice controller (the serve Services' endpoints) are real.
func TestDoctorRayServiceUpgradeAndServe(t *testing.T) {
	t.Parallel()
	h := newHOn(t, sandboxPlayedOperator(t, "rayservice-status"))

	// shop: healthy. Its serve Service selects the active cluster, whose worker is ready.
	h.playCluster("shop-a", "true", true)
	h.playServeService("shop", "shop-a")
	h.playRayService("shop", "shop-a", "", true, time.Time{})
	// outage: the only worker lost ray.io/serve=true, so the Service has no endpoint, while the
	// RayService's last status still says Ready and Running.
	h.playCluster("outage-a", "false", true)
	h.playServeService("outage", "outage-a")
	h.playRayService("outage", "outage-a", "", true, time.Time{})
	// moved (kuberay #5148): the upgrade finished, moved-b is active, the Service still selects
	// moved-a, which is deleted.
	h.playCluster("moved-b", "true", true)
	h.playServeService("moved", "moved-a")
	h.playRayService("moved", "moved-b", "", true, time.Time{})
	// upgrade: upgrading for 30m; the pending cluster's head is Unschedulable.
	h.playCluster("upgrade-a", "true", true)
	h.playServeService("upgrade", "upgrade-a")
	h.playCluster("upgrade-b", "true", false)
	h.playRayService("upgrade", "upgrade-a", "upgrade-b", true, time.Now().Add(-30*time.Minute))
	// young: the same, 1m into the upgrade: not reported yet.
	h.playCluster("young-a", "true", true)
	h.playServeService("young", "young-a")
	h.playCluster("young-b", "true", false)
	h.playRayService("young", "young-a", "young-b", true, time.Now().Add(-1*time.Minute))
	settled := time.Now()

	for _, c := range []string{"shop-a", "outage-a", "moved-b", "upgrade-a", "young-a"} {
		h.WaitClusterRunning(c, 60*time.Second)
	}
	for _, c := range []string{"upgrade-b", "young-b"} {
		c := c
		h.WaitFor("the head of "+c+" Unschedulable", 60*time.Second, func() (bool, error) {
			heads := h.Pods(c, "head")
			return len(heads) == 1 && podUnschedulable(&heads[0]), nil
		})
	}
	h.WaitFor("the serve Services' EndpointSlices (shop has its worker, outage none)", 60*time.Second, func() (bool, error) {
		return h.readyServeEndpoints("shop-serve-svc") == 1 && h.sliceExists("outage-serve-svc"), nil
	})

	want := func(d drDoc, stuck, noEndpoints bool) {
		t.Helper()
		wantRules(t, d, "shop-a")
		wantRules(t, d, "upgrade-a")
		wantRules(t, d, "young-a")
		wantRules(t, d, "young-b", rule("head-pending", "pod", "young-b-head-x1"))
		if stuck {
			wantRules(t, d, "upgrade-b", rule("head-pending", "pod", "upgrade-b-head-x1"), rule("rayservice-upgrade-stuck", "rayservice", "upgrade"))
		}
		if noEndpoints {
			wantRules(t, d, "outage-a", rule("serve-no-endpoints", "service", "outage-serve-svc"))
			wantRules(t, d, "moved-b", rule("serve-no-endpoints", "service", "moved-serve-svc"))
		} else {
			wantRules(t, d, "outage-a")
			wantRules(t, d, "moved-b")
		}
	}
	// Within the grace period of the serve Services (just created): not judged yet.
	if time.Since(settled) < 45*time.Second {
		d, _ := h.doctorJSON("--fail-on", "never")
		want(d, true, false)
	} else {
		t.Logf("setting up took %s: the in-grace check is skipped", time.Since(settled).Round(time.Second))
	}

	// Past ServeEndpointsGrace (1m) since the Services were created and their slices last changed.
	time.Sleep(time.Until(settled.Add(diagnose.DefaultOptions().ServeEndpointsGrace + 5*time.Second)))
	d, res := h.doctorJSON()
	if res.Code != 1 {
		t.Fatalf("serve-no-endpoints is an error: want exit 1: %s", res)
	}
	want(d, true, true)

	stuck := d.finding(t, "upgrade-b", "rayservice-upgrade-stuck")
	wantContains(t, "rayservice-upgrade-stuck", stuck.Message, // 30m before the set-up, which itself takes a minute or two.
		"RayService "+h.NS+"/upgrade has been upgrading for 3",
		"pending RayCluster upgrade-b has no Ready head: head pod upgrade-b-head-x1 is Pending, Unschedulable (HeadPodReady=False, HeadPodNotFound)",
		"traffic stays on the active cluster upgrade-a", "kuberay #5088")
	wantContains(t, "rayservice-upgrade-stuck remedy", stuck.Remedy, "kubectl ray doctor raycluster/upgrade-b -n "+h.NS)
	if stuck.Severity != "warning" || stuck.Evidence["pendingCluster"] != "upgrade-b" || stuck.Evidence["activeCluster"] != "upgrade-a" {
		t.Errorf("rayservice-upgrade-stuck: %+v", stuck)
	}
	out := d.finding(t, "outage-a", "serve-no-endpoints")
	wantContains(t, "serve-no-endpoints", out.Message, "serve Service outage-serve-svc has no ready endpoint while RayService "+h.NS+"/outage reports Ready=True, serviceStatus=Running")
	if out.Severity != "error" || out.Evidence["readyEndpoints"] != "0" {
		t.Errorf("serve-no-endpoints: %+v", out)
	}
	moved := d.finding(t, "moved-b", "serve-no-endpoints")
	wantContains(t, "serve-no-endpoints (moved)", moved.Message, "serve Service moved-serve-svc selects RayCluster moved-a, not the active cluster moved-b", "kuberay #5148")

	// The table says the same.
	tab := h.Run("doctor", "--fail-on", "never")
	wantContains(t, "table", tab.Stdout, "serve-no-endpoints", "rayservice-upgrade-stuck")
}

func podUnschedulable(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// readyServeEndpoints counts the ready endpoints of a Service's EndpointSlices.
func (h *H) readyServeEndpoints(service string) int {
	h.T.Helper()
	l, err := h.Kube.DiscoveryV1().EndpointSlices(h.NS).List(h.Ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + service})
	if err != nil {
		h.T.Fatal(err)
	}
	n := 0
	for _, s := range l.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				n++
			}
		}
	}
	return n
}

func (h *H) sliceExists(service string) bool {
	h.T.Helper()
	l, err := h.Kube.DiscoveryV1().EndpointSlices(h.NS).List(h.Ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + service})
	if err != nil {
		h.T.Fatal(err)
	}
	return len(l.Items) > 0
}
