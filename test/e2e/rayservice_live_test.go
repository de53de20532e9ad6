package e2e

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// TestRayServiceLive runs KubeRay's own RayService controller (v1.5.0 and v1.6.0) against the Ray
// stand-ins of test/play (StartRay): nothing in the test labels pods or creates Services. The
// stand-ins play, by name: PlayDashboardServeAPI, PlayAppsStartDeploying, PlayHeadRestartLosesApps,
// PlayProxyHealth, PlayProxyLostController, PlayProxyRoutes, PlayPodLifetime (docs/sandbox.md).
// kwok plays the kubelet: pods become Running and Ready without running anything.
func TestRayServiceLive(t *testing.T) {
	t.Parallel()
	for _, v := range []struct {
		version string
		sb      func(*testing.T) *sandbox.Sandbox
	}{{sandbox.OperatorV150, sandboxV150}, {sandbox.OperatorV160, sandboxV160}} {
		t.Run(strings.ReplaceAll(v.version, ".", ""), func(t *testing.T) {
			t.Parallel()
			testRayServiceLive(t, v.sb(t), v.version)
		})
	}
}

func testRayServiceLive(t *testing.T, sb *sandbox.Sandbox, version string) {
	h := newHOn(t, sb)
	ray := startRay(h, play.RayOptions{DeployTime: time.Second})

	// KubeRay's ray-service.sample.yaml of this version, its head with num-cpus 0 (what Ray's HA
	// guide asks, so serve-head-has-cpus stays silent and only the head-in-service rule is live).
	cluster := h.createLiveRayService("rs", version, func(rs *rayv1.RayService) {
		rs.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0"}
	})
	t.Logf("RayService rs Ready on KubeRay %s; active cluster %s; stand-in apps %v", version, cluster, ray.Apps(cluster))
	if got := strings.Join(ray.Apps(cluster), ","); got != "fruit_app,math_app" {
		t.Errorf("the operator submitted apps %q to the stand-in dashboard, want fruit_app,math_app", got)
	}

	// The operator created the serve Service itself, owned by the RayService, selecting its pods.
	svc, err := h.Kube.CoreV1().Services(h.NS).Get(h.Ctx, "rs-serve-svc", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the operator did not create rs-serve-svc: %v", err)
	}
	if len(svc.OwnerReferences) != 1 || svc.OwnerReferences[0].Kind != "RayService" || svc.Spec.Selector["ray.io/serve"] != "true" {
		t.Errorf("rs-serve-svc: owners %v selector %v; want the RayService and ray.io/serve=true", svc.OwnerReferences, svc.Spec.Selector)
	}
	// It labelled the head ray.io/serve=true after its stand-in proxy's /-/healthz answered 200
	// (PlayProxyHealth); the workers carry the label from their template.
	head := h.headOf(cluster)
	if head.Labels["ray.io/serve"] != "true" {
		t.Errorf("head %s: ray.io/serve=%q, want true (labelled by the operator)", head.Name, head.Labels["ray.io/serve"])
	}
	h.waitEvent("rs", "UpdatedHeadPodServeLabel", `Updated the serve label to "true" for the Head Pod `+h.NS+"/"+head.Name)
	workers := h.Pods(cluster, "worker")
	h.waitServeEndpoints("rs-serve-svc", append([]string{head.Name}, podNames(workers)...))

	// Doctor on the live RayService: the serve Service sends traffic to the head.
	d, _ := h.doctorJSON()
	wantServeRules(t, d, cluster, rule("serve-head-in-service", "service", "rs-serve-svc"))

	// head-kill through the Service the operator maintains: every answer the report counts is
	// one a stand-in gave. After the kill the worker's proxy answers 502 until the operator has
	// submitted the apps to the new head (PlayHeadRestartLosesApps, PlayProxyLostController).
	before := time.Now()
	res := h.Run("chaos", "head-kill", "rayservice/rs", "--path", "/fruit", "--rate", "50/s", "--warmup", "2s",
		"--until-recovered", "--timeout", "90s", "-o", "json", "--yes")
	r := parseHeadKillReport(t, res)
	_, served := ray.Tally(before, false)
	t.Logf("report: %+v; stand-ins served %v", r.Totals, served)
	if r.Totals.Status502 == 0 || served["502"] != r.Totals.Status502 || served["200"] != r.Totals.ByStatus["200"] {
		t.Errorf("report counts 200: %d, 502: %d; the stand-ins served %v (want equal, some 502)", r.Totals.ByStatus["200"], r.Totals.Status502, served)
	}
	if !reportEndpointFailed(r, head.Name) {
		t.Errorf("with the head in the Service, its endpoint should fail in the report: %+v", r.Endpoints)
	}
	if r.Recovery.NewHead == "" || r.Recovery.NewHead == head.Name {
		t.Errorf("report names no new head: %+v", r.Recovery)
	}

	// excludeHeadPodFromServeSvc: the operator relabels the head ray.io/serve=false; only the
	// workers stay behind the Service, and a head kill fails only their endpoints.
	h.WaitFor("RayService rs Ready again", 90*time.Second, func() (bool, error) { return h.rayServiceReady("rs") })
	patch := []byte(`{"spec":{"excludeHeadPodFromServeSvc":true}}`)
	if _, err := h.Ray.RayV1().RayServices(h.NS).Patch(h.Ctx, "rs", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	head = h.headOf(cluster)
	workers = h.Pods(cluster, "worker")
	h.waitServeEndpoints("rs-serve-svc", podNames(workers))
	if got := h.headOf(cluster).Labels["ray.io/serve"]; got != "false" {
		t.Errorf("excludeHeadPodFromServeSvc: head labelled ray.io/serve=%q, want false", got)
	}
	d, _ = h.doctorJSON()
	wantServeRules(t, d, cluster) // healthy: no serve finding
	res = h.Run("chaos", "head-kill", "rayservice/rs", "--path", "/fruit", "--rate", "50/s", "--warmup", "2s",
		"--until-recovered", "--timeout", "90s", "-o", "json", "--yes")
	r = parseHeadKillReport(t, res)
	for _, e := range r.Endpoints {
		if strings.Contains(e.Name, head.Name) {
			t.Errorf("excluded head %s was probed: %+v", head.Name, e)
		}
	}
	if r.Totals.Status502 == 0 {
		t.Errorf("with the head excluded the workers' proxies still lose their controller: want 502s, got %+v", r.Totals)
	}
	if err := ray.Err(); err != nil {
		t.Errorf("Ray stand-ins: %v", err)
	}
}

// startRay starts the Ray stand-ins for the test's namespace and stops them at the end.
func startRay(h *H, opts play.RayOptions) *play.Ray {
	h.T.Helper()
	if opts.Logf == nil {
		opts.Logf = h.T.Logf
	}
	ray, err := play.StartRay(h.Ctx, h.Kube, h.SB.Admin, h.NS, opts)
	if err != nil {
		h.T.Fatal(err)
	}
	h.T.Cleanup(ray.Close)
	return ray
}

// createLiveRayService creates the version's own ray-service.sample.yaml named name, changed by
// mutate, waits until the operator reports it Ready, and returns its active RayCluster.
func (h *H) createLiveRayService(name, version string, mutate func(*rayv1.RayService)) string {
	h.T.Helper()
	path, err := h.SB.Config().OperatorSample(h.Ctx, version, "ray-service.sample.yaml")
	if err != nil {
		h.T.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		h.T.Fatal(err)
	}
	rs := &rayv1.RayService{}
	if err := yaml.Unmarshal(data, rs); err != nil {
		h.T.Fatal(err)
	}
	rs.Name, rs.Namespace = name, h.NS
	if mutate != nil {
		mutate(rs)
	}
	if _, err := h.Ray.RayV1().RayServices(h.NS).Create(h.Ctx, rs, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	h.WaitFor("RayService "+name+" Ready", 120*time.Second, func() (bool, error) { return h.rayServiceReady(name) })
	got, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	return got.Status.ActiveServiceStatus.RayClusterName
}

// rayServiceReady is the operator's own verdict: condition Ready True (v1.5.0, v1.6.0).
func (h *H) rayServiceReady(name string) (bool, error) {
	rs, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	return meta.IsStatusConditionTrue(rs.Status.Conditions, string(rayv1.RayServiceReady)), nil
}

// waitServeEndpoints waits until the Service's ready endpoints are exactly the pods named.
func (h *H) waitServeEndpoints(service string, pods []string) {
	h.T.Helper()
	sort.Strings(pods)
	want := strings.Join(pods, ",")
	var got string
	h.WaitFor(fmt.Sprintf("%s endpoints %s", service, want), 60*time.Second, func() (bool, error) {
		l, err := h.Kube.DiscoveryV1().EndpointSlices(h.NS).List(h.Ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + service})
		if err != nil {
			return false, err
		}
		var names []string
		for _, s := range l.Items {
			for _, e := range s.Endpoints {
				if (e.Conditions.Ready == nil || *e.Conditions.Ready) && e.TargetRef != nil {
					names = append(names, e.TargetRef.Name)
				}
			}
		}
		sort.Strings(names)
		got = strings.Join(names, ",")
		return got == want, nil
	})
}

// waitEvent waits for an Event about RayService name with reason and message.
func (h *H) waitEvent(name, reason, message string) {
	h.T.Helper()
	h.WaitFor("Event "+reason+" on RayService "+name, 30*time.Second, func() (bool, error) {
		l, err := h.Kube.CoreV1().Events(h.NS).List(h.Ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return false, err
		}
		for _, e := range l.Items {
			if e.Reason == reason && e.Message == message {
				return true, nil
			}
		}
		return false, nil
	})
}

// wantServeRules is wantRules for the serve-* rules only (gcs-ft-off also fires on the sample).
func wantServeRules(t *testing.T, d drDoc, cluster string, want ...string) {
	t.Helper()
	var got []string
	for _, r := range d.rules(cluster) {
		if strings.HasPrefix(r, "serve-") {
			got = append(got, r)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("serve findings for %q:\n  got  %q\n  want %q", cluster, got, want)
	}
}

// reportEndpointFailed reports whether the endpoint of pod had failed requests in the report.
func reportEndpointFailed(r *headKillReport, pod string) bool {
	for _, e := range r.Endpoints {
		if strings.Contains(e.Name, pod) && e.Errors > 0 {
			return true
		}
	}
	return false
}
