package e2e

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
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
	for _, v := range liveSandboxes {
		t.Run(strings.ReplaceAll(v.version, ".", ""), func(t *testing.T) {
			t.Parallel()
			testRayServiceLive(t, v.sb(t), v.version)
		})
	}
}

// liveSandboxes are the sandboxes with the pod network, one per operator version, where the real
// operator reaches the Ray stand-ins (StartRay).
var liveSandboxes = []struct {
	version string
	sb      func(*testing.T) *sandbox.Sandbox
}{{sandbox.OperatorV111, sandboxV111Serve}, {sandbox.OperatorV150, sandboxV150}, {sandbox.OperatorV160, sandboxV160}}

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
	h.WaitFor("the operator to label head "+head.Name+" ray.io/serve=true", 30*time.Second, func() (bool, error) {
		return h.headOf(cluster).Labels["ray.io/serve"] == "true", nil
	})
	if version != sandbox.OperatorV111 { // v1.1.1 records no Event for it
		h.waitEvent("rs", "UpdatedHeadPodServeLabel", `Updated the serve label to "true" for the Head Pod `+h.NS+"/"+head.Name)
	}
	workers := h.Pods(cluster, "worker")
	h.waitServeEndpoints("rs-serve-svc", append([]string{head.Name}, podNames(workers)...))

	// Doctor on the live RayService: the serve Service sends traffic to the head.
	d, _ := h.doctorJSON()
	wantServeRules(t, d, cluster, rule("serve-head-in-service", "service", "rs-serve-svc"))

	// doctor -f of the document rs was created from, now that it is Ready: KubeRay compares a
	// new document with its active cluster's hash (matrixRayServiceApply covers the pending one).
	// About 1 s.
	h.wantApplyVerdict(version, "rs", cluster, nil, "unchanged")
	h.wantApplyVerdict(version, "rs", cluster, func(rs *rayv1.RayService) {
		rs.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image += "-changed"
	}, "new-cluster")

	// head-kill through the Service the operator maintains: every answer the report counts is
	// one a stand-in gave. After the kill the worker's proxy answers 502 until the operator has
	// submitted the apps to the new head (PlayHeadRestartLosesApps, PlayProxyLostController).
	before := time.Now()
	res := h.Run("chaos", "head-kill", "rayservice/rs", "--path", "/fruit", "--rate", "50/s", "--warmup", "2s",
		"--until-recovered", "--timeout", "90s", "-o", "json", "--yes")
	r := parseHeadKillReport(t, res)
	perPod, served := ray.Tally(before, false)
	t.Logf("report: %+v; stand-ins served %v", r.Totals, served)
	if r.Totals.Status502 == 0 || fmt.Sprint(httpCodes(r.Totals.ByStatus)) != fmt.Sprint(served) {
		t.Errorf("report counts %v; the stand-ins served %v (want equal, some 502)", r.Totals.ByStatus, served)
	}
	for _, e := range r.Endpoints {
		if got, want := fmt.Sprint(httpCodes(e.ByStatus)), fmt.Sprint(perPod[e.Name]); got != want {
			t.Errorf("endpoint %s: report counts %s, its stand-in served %s", e.Name, got, want)
		}
	}
	// With the head in the Service, the head's proxy is one of the probed endpoints. Whether a
	// request is in flight on it at the instant of the kill is a race the sandbox cannot pin down
	// (kwok ends the pod and its endpoint within milliseconds), so the test asserts the exposure,
	// not a failure: with excludeHeadPodFromServeSvc below, the head is never probed at all.
	if !reportEndpointProbed(r, head.Name) {
		t.Errorf("with the head in the Service, its endpoint should be probed: %+v", r.Endpoints)
	}
	if r.Recovery.NewHead == "" || r.Recovery.NewHead == head.Name {
		t.Errorf("report names no new head: %+v", r.Recovery)
	}

	if version == sandbox.OperatorV111 {
		return // no excludeHeadPodFromServeSvc before KubeRay v1.2
	}
	if err := ray.Err(); err != nil {
		t.Errorf("Ray stand-ins: %v", err)
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
	rs := h.sampleRayService(name, version, mutate)
	if _, err := h.Ray.RayV1().RayServices(h.NS).Create(h.Ctx, rs, metav1.CreateOptions{}); err != nil {
		h.T.Fatal(err)
	}
	return h.waitRayServiceActive(name)
}

// waitRayServiceActive waits until the operator reports RayService name Ready, and returns its
// active RayCluster.
func (h *H) waitRayServiceActive(name string) string {
	h.T.Helper()
	h.WaitFor("RayService "+name+" Ready", 120*time.Second, func() (bool, error) { return h.rayServiceReady(name) })
	got, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	return got.Status.ActiveServiceStatus.RayClusterName
}

// wantApplyVerdict checks doctor -f's exists-in-cluster verdict on the document RayService name
// was created from (createLiveRayService's, with num-cpus 0), changed by mutate, against its
// active cluster.
func (h *H) wantApplyVerdict(version, name, active string, mutate func(*rayv1.RayService), want string) {
	h.T.Helper()
	rs := h.sampleRayService(name, version, func(rs *rayv1.RayService) {
		rs.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0"}
		if mutate != nil {
			mutate(rs)
		}
	})
	file := manifestFile(h.T, want, rs)
	d, res := h.doctorJSON("-f", file, "--fail-on", "never")
	for _, f := range d.Findings {
		if f.Rule == "exists-in-cluster" && f.Object.Kind == "RayService" {
			if f.Evidence["verdict"] != want || !strings.Contains(f.Message, "its active cluster "+active+" (") {
				h.T.Errorf("KubeRay %s, doctor -f of %s: verdict %q, want %q against active cluster %s: %s", version, want, f.Evidence["verdict"], want, active, f.Message)
			}
			return
		}
	}
	h.T.Errorf("KubeRay %s, doctor -f of %s: no exists-in-cluster for the RayService\n%s", version, want, res)
}

// sampleRayService is the version's own ray-service.sample.yaml named name in the test's
// namespace, changed by mutate.
func (h *H) sampleRayService(name, version string, mutate func(*rayv1.RayService)) *rayv1.RayService {
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
	return rs
}

// rayServiceReady is the operator's own verdict: condition Ready True (v1.5.0, v1.6.0), or
// serviceStatus Running (v1.1.1 writes no conditions).
func (h *H) rayServiceReady(name string) (bool, error) {
	rs, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	if h.SB.Operator() == sandbox.OperatorV111 {
		return rs.Status.ServiceStatus == rayv1.Running, nil
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

// httpCodes keeps the HTTP status codes of a byStatus map (not the outcome classes).
func httpCodes(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		if len(k) == 3 && k[0] >= '1' && k[0] <= '5' {
			out[k] = v
		}
	}
	return out
}

// reportEndpointProbed reports whether the report counts requests to the endpoint of pod.
func reportEndpointProbed(r *headKillReport, pod string) bool {
	for _, e := range r.Endpoints {
		if strings.Contains(e.Name, pod) && e.Requests > 0 {
			return true
		}
	}
	return false
}

// TestRayServiceLiveUpgrade: the real RayService controller upgrades (a new image makes KubeRay
// start a pending cluster), with the Ray stand-ins playing Serve (PlayDashboardServeAPI,
// PlayAppsStartDeploying, PlayProxyRoutes). A healthy upgrade switches the serve Service to the
// new cluster and deletes the old one; an upgrade whose applications never become RUNNING on the
// new cluster (NeverRunning) leaves traffic on the old cluster with UpgradeInProgress True. This is
// what `chaos upgrade` probes through (TestChaosUpgrade runs it).
func TestRayServiceLiveUpgrade(t *testing.T) {
	t.Parallel()
	for _, v := range []struct {
		version string
		sb      func(*testing.T) *sandbox.Sandbox
	}{{sandbox.OperatorV150, sandboxV150}, {sandbox.OperatorV160, sandboxV160}} {
		t.Run(strings.ReplaceAll(v.version, ".", ""), func(t *testing.T) {
			t.Parallel()
			testRayServiceLiveUpgrade(t, v.sb(t), v.version)
		})
	}
}

func testRayServiceLiveUpgrade(t *testing.T, sb *sandbox.Sandbox, version string) {
	h := newHOn(t, sb)
	var mu sync.Mutex
	healthy := map[string]bool{} // clusters whose apps may become RUNNING
	ray := startRay(h, play.RayOptions{DeployTime: time.Second, NeverRunning: func(cluster string) bool {
		mu.Lock()
		defer mu.Unlock()
		return !healthy[cluster]
	}})
	allowAll := true
	allow := func(cluster string) bool {
		mu.Lock()
		defer mu.Unlock()
		if allowAll {
			healthy[cluster] = true
		}
		return healthy[cluster]
	}
	// Every cluster KubeRay creates may run its apps, until the test says otherwise.
	stopAllowing := make(chan struct{})
	go func() {
		for {
			select {
			case <-stopAllowing:
				return
			case <-time.After(100 * time.Millisecond):
			}
			l, err := h.Ray.RayV1().RayClusters(h.NS).List(h.Ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			for _, rc := range l.Items {
				allow(rc.Name)
			}
		}
	}()
	defer close(stopAllowing)

	zero := int32(0)
	old := h.createLiveRayService("up", version, func(rs *rayv1.RayService) { rs.Spec.RayClusterDeletionDelaySeconds = &zero })

	// A healthy upgrade: new image, a pending cluster, its apps RUNNING, the switch, the old
	// cluster deleted.
	setImage := func(image string) {
		t.Helper()
		rs, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "up", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rs.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Image = image
		for i := range rs.Spec.RayClusterSpec.WorkerGroupSpecs {
			rs.Spec.RayClusterSpec.WorkerGroupSpecs[i].Template.Spec.Containers[0].Image = image
		}
		if _, err := h.Ray.RayV1().RayServices(h.NS).Update(h.Ctx, rs, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setImage("rayproject/ray:2.46.0-py311")
	var active string
	h.WaitFor("the switch to a new active cluster", 120*time.Second, func() (bool, error) {
		rs, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "up", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		active = rs.Status.ActiveServiceStatus.RayClusterName
		return active != old && active != "" && rs.Status.PendingServiceStatus.RayClusterName == "", nil
	})
	h.waitServeEndpoints("up-serve-svc", podNames(append(h.Pods(active, "head"), h.Pods(active, "worker")...)))
	h.WaitFor("the old cluster "+old+" deleted", 60*time.Second, func() (bool, error) {
		_, err := h.Ray.RayV1().RayClusters(h.NS).Get(h.Ctx, old, metav1.GetOptions{})
		return err != nil, nil
	})
	if got := strings.Join(ray.Apps(active), ","); got != "fruit_app,math_app" {
		t.Errorf("apps on the new cluster %s: %q", active, got)
	}
	// The sample's own configuration findings (gcs-ft-off, serve-head-*) stand; nothing about the
	// upgrade or the Service's endpoints may.
	d, _ := h.doctorJSON("--upgrade-stuck-after", "1s", "--serve-endpoints-grace", "1s")
	for _, r := range d.rules(active) {
		if strings.HasPrefix(r, "rayservice-upgrade-stuck ") || strings.HasPrefix(r, "serve-no-endpoints ") {
			t.Errorf("doctor after a healthy upgrade: %q", d.rules(active))
		}
	}

	// An upgrade whose new cluster never runs its apps: KubeRay keeps traffic on the active one.
	mu.Lock()
	allowAll = false
	mu.Unlock()
	setImage("rayproject/ray:2.46.0-py312")
	var pending string
	h.WaitFor("a pending cluster with its head Running", 90*time.Second, func() (bool, error) {
		rs, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "up", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pending = rs.Status.PendingServiceStatus.RayClusterName
		if pending == "" {
			return false, nil
		}
		heads := h.Pods(pending, "head")
		return len(heads) == 1 && PodRunningReady(&heads[0]) && len(ray.Apps(pending)) == 2 &&
			meta.IsStatusConditionTrue(rs.Status.Conditions, string(rayv1.UpgradeInProgress)), nil
	})
	time.Sleep(5 * time.Second) // several reconciles (KubeRay requeues a RayService every 2 s)
	rs, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "up", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rs.Status.ActiveServiceStatus.RayClusterName != active || rs.Status.PendingServiceStatus.RayClusterName != pending {
		t.Errorf("with the new cluster's apps DEPLOYING: active %q pending %q, want %q and %q",
			rs.Status.ActiveServiceStatus.RayClusterName, rs.Status.PendingServiceStatus.RayClusterName, active, pending)
	}
	h.waitServeEndpoints("up-serve-svc", podNames(append(h.Pods(active, "head"), h.Pods(active, "worker")...)))
	// The threshold (20m by default) is set to 1s with its flag, so the test does not wait 20m.
	d, _ = h.doctorJSON("--upgrade-stuck-after", "1s")
	t.Logf("doctor on the pending cluster (head Ready, apps DEPLOYING): %q; on the active one: %q", d.rules(pending), d.rules(active))
	f := d.finding(t, pending, "rayservice-upgrade-stuck")
	wantContains(t, "message", f.Message, "RayService "+h.NS+"/up has been upgrading for", "pending RayCluster "+pending+" has a Ready head, but its Serve applications are not running: ",
		"traffic stays on the active cluster "+active)
	if err := ray.Err(); err != nil {
		t.Errorf("Ray stand-ins: %v", err)
	}
}
