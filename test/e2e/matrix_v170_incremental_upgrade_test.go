package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// gatewayAPIVersion is the Gateway API KubeRay v1.7.0 builds with (its go.mod): building the
// operator puts the module, CRDs included, in the module cache.
const gatewayAPIVersion = "v1.4.1"

// incremental-upgrade: a RayService upgraded with NewClusterWithIncrementalUpgrade on the real
// KubeRay v1.7.0 (the gate is on by default), its Ray played by the stand-ins.
//   - The sandbox has no Gateway API: the operator makes no RayCluster, records nothing, and doctor
//     reports incremental-upgrade-blocked (gatewayAPI absent), not rayservice-no-cluster.
//   - The Gateway API's standard CRDs installed (from the module cache): the operator goes on by
//     itself and the RayService gets its cluster; doctor is silent.
//   - An upgrade: no gateway controller runs, so the Gateway stays as its CRD defaults it and the
//     operator moves no capacity; doctor names the Gateway and its conditions.
//   - The spec put back: the operator rolls back to the old cluster without the Gateway (the
//     remedy's other way).
//   - The upgrade again, and the gateway controller played (the Gateway Accepted and Programmed,
//     the HTTPRoute's entry Accepted and ResolvedRefs, written as a controller would): the
//     operator completes the upgrade, and doctor is silent.
//
// A bundle of each state, read back by doctor --from. About 25 s. The CRDs stay in the v1.7.0 sandbox (no other case lists Gateways: none of their
// RayServices upgrades incrementally).
func matrixIncrementalUpgrade(t *testing.T, h *H, v kubeRayVersion) {
	startRay(h, play.RayOptions{DeployTime: time.Second})
	rs := h.sampleRayService("incr", v.version, func(rs *rayv1.RayService) {
		rs.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0"}
		rs.Spec.RayClusterDeletionDelaySeconds = ptr.To(int32(0)) // chaos upgrade waits for the old cluster's deletion
		rs.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr.To(true)
		rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.RayServiceNewClusterWithIncrementalUpgrade),
			ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{GatewayClassName: "played", StepSizePercent: ptr.To(int32(50)), IntervalSeconds: ptr.To(int32(1)), MaxSurgePercent: ptr.To(int32(100))}}
	})
	h.createJSON(mustJSON(t, objectMap(t, "RayService", rs)))

	// No Gateway API: a few reconciles fail (the operator's backoff is still short), nothing is made.
	time.Sleep(3 * time.Second)
	if l, err := h.Ray.RayV1().RayClusters(h.NS).List(h.Ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("KubeRay %s made %d RayClusters without the Gateway API (%v): the case tests nothing", v.version, len(l.Items), err)
	}
	d, res := h.doctorJSON("--operator-grace", "1s")
	f := serviceFinding(t, d, "incr", "incremental-upgrade-blocked")
	t.Logf("incremental-upgrade-blocked, no Gateway API: %s\nfix: %s", f.Message, f.Remedy)
	wantContains(t, "no Gateway API", f.Message, "RayService "+h.NS+"/incr upgrades with NewClusterWithIncrementalUpgrade (gatewayClassName \"played\"), and the cluster has no Gateway API",
		"so it gets no RayCluster")
	if f.Evidence["gatewayAPI"] != "absent" || f.Severity != "error" || res.Code != 1 || strings.Contains(res.Stdout, `"rule": "rayservice-no-cluster"`) {
		t.Errorf("want incremental-upgrade-blocked alone, gatewayAPI absent, exit 1; got %+v\n%s", f, res)
	}

	h.wantBundledRule("nogw", "incremental-upgrade-blocked", "and the cluster has no Gateway API")

	var pending string
	var last rayv1.RayServiceStatuses
	defer func() {
		if t.Failed() {
			b, _ := json.MarshalIndent(last, "", "  ")
			t.Logf("RayService incr's last status:\n%s", b)
		}
	}()
	waitStatus := func(what string, done func(rayv1.RayServiceStatuses) bool) {
		h.WaitFor(what, 90*time.Second, func() (bool, error) {
			got, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "incr", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			last = got.Status
			return done(got.Status), nil
		})
	}
	installGatewayAPI(h)
	// Ready comes first (a pending cluster's serve endpoints count); the upgrade needs an active
	// cluster with all the traffic, which the HTTPRoute gives it once it is promoted.
	h.waitRayServiceActive("incr")
	var active string
	waitStatus("RayService incr's first cluster promoted, with all the traffic", func(st rayv1.RayServiceStatuses) bool {
		active = st.ActiveServiceStatus.RayClusterName
		return active != "" && ptr.Deref(st.ActiveServiceStatus.TrafficRoutedPercent, 0) == 100
	})
	if d, res := h.doctorJSON("--operator-grace", "1s"); slices.Contains(d.ruleIDs(), "incremental-upgrade-blocked") || res.Code != 0 {
		t.Errorf("KubeRay %s, a RayService upgrading incrementally, Ready, not upgrading: want no error\n%s", v.version, res)
	}

	// chaos upgrade refuses an upgrade the operator would stall, and changes nothing.
	res = h.Run("chaos", "upgrade", "rayservice/incr", "--image", "rayproject/ray:2.52.0-upgraded", "--yes")
	if res.Code != 2 || !strings.Contains(res.Stderr, "Gateway "+h.NS+"/incr-gateway is not ready (Accepted=Unknown (Pending: Waiting for controller)") || res.Stdout != "" {
		t.Errorf("chaos upgrade with the Gateway not ready: want exit 2, nothing done\n%s", res)
	}
	saveUpgrade("incremental-gateway-not-ready.txt", res.Stderr)

	// An upgrade: a changed head makes a new cluster; no controller programs the Gateway.
	upgrade := func(value string) {
		h.updateRayService("incr", func(rs *rayv1.RayService) {
			c := &rs.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0]
			c.Env = slices.DeleteFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "UPGRADE" })
			if value != "" {
				c.Env = append(c.Env, corev1.EnvVar{Name: "UPGRADE", Value: value})
			}
		})
	}
	upgrading := func(st rayv1.RayServiceStatuses) bool {
		pending = st.PendingServiceStatus.RayClusterName
		return pending != "" && meta.IsStatusConditionTrue(st.Conditions, string(rayv1.UpgradeInProgress))
	}
	upgrade("1")
	waitStatus("the incremental upgrade to start", upgrading)
	time.Sleep(1500 * time.Millisecond) // past --operator-grace 1s
	d, res = h.doctorJSON("--operator-grace", "1s")
	f = serviceFinding(t, d, "incr", "incremental-upgrade-blocked")
	t.Logf("incremental-upgrade-blocked, the stalled upgrade: %s\nfix: %s", f.Message, f.Remedy)
	wantContains(t, "the stalled upgrade", f.Message, "is upgrading from RayCluster "+active+" to "+pending, "the operator moves no capacity: its Gateway incr-gateway is not ready: Accepted")
	wantContains(t, "the stalled upgrade's remedy", f.Remedy, "have GatewayClass played's controller accept the Gateway and its HTTPRoute", "to roll back to RayCluster "+active)
	if f.Evidence["pendingTargetCapacity"] != "0%" || res.Code != 1 {
		t.Errorf("want the new cluster held at 0%%, exit 1; got %+v\n%s", f, res)
	}

	files := h.wantBundledRule("stalled", "incremental-upgrade-blocked", "its Gateway incr-gateway is not ready")
	wantContains(t, "the bundled Gateway", string(files["stalled/namespaces/"+h.NS+"/gateways/incr-gateway.json"]), `"kind": "Gateway"`, `"listeners":`, `"gatewayClassName": "played"`)
	wantContains(t, "the bundled HTTPRoute", string(files["stalled/namespaces/"+h.NS+"/httproutes/incr-httproute.json"]), `"kind": "HTTPRoute"`, `"backendRefs":`)

	// The remedy's other way: the spec put back, the operator rolls back to the old cluster
	// without the Gateway (nothing had moved).
	upgrade("")
	waitStatus("the rollback to complete", func(st rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == active && st.PendingServiceStatus.RayClusterName == "" &&
			!meta.IsStatusConditionTrue(st.Conditions, string(rayv1.UpgradeInProgress))
	})

	// The upgrade again, and the gateway controller played: the operator completes it.
	upgrade("2")
	waitStatus("the incremental upgrade to start again", upgrading)
	playGatewayController(h, "incr")
	waitStatus("the upgrade to complete", func(st rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == pending && st.PendingServiceStatus.RayClusterName == ""
	})
	if d, res := h.doctorJSON("--operator-grace", "1s"); slices.Contains(d.ruleIDs(), "incremental-upgrade-blocked") {
		t.Errorf("after the upgrade: still incremental-upgrade-blocked\n%s", res)
	}
	chaosUpgradeThroughGateway(h, pending)
}

// chaosUpgradeThroughGateway runs chaos upgrade on RayService incr, whose Gateway and HTTPRoute the
// played gateway controller made ready: refused while the Gateway has no data plane Service, then
// run through a played data plane (play.GatewayDataPlane: a proxy splitting requests by the
// HTTPRoute's weights, reaching each cluster's serve Service through the sandbox's pod network).
// The real operator moves capacity and traffic; the report must show each step, both clusters
// must have answered through the Gateway, and no request may fail. About 12 s.
func chaosUpgradeThroughGateway(h *H, active string) {
	t := h.T
	image := "rayproject/ray:2.52.0-upgraded"
	res := h.Run("chaos", "upgrade", "rayservice/incr", "--image", image, "--yes")
	if res.Code != 2 || !strings.Contains(res.Stderr, "no Service of Gateway "+h.NS+"/incr-gateway's data plane was found") || res.Stdout != "" {
		t.Errorf("chaos upgrade without a data plane Service: want exit 2, nothing done\n%s", res)
	}
	gw, err := play.StartGatewayDataPlane(h.Ctx, h.Kube, h.SB.Admin, h.NS, "incr-gateway", sandbox.NodeName(0), h.SB.ServiceProxy())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	res = h.Run("chaos", "upgrade", "rayservice/incr", "--image", image, "--path", "/fruit", "--dry-run")
	if res.Code != 0 || !strings.Contains(res.Stdout, "Would probe:  GET service/"+h.NS+"/incr-gateway-dataplane:80/fruit") ||
		!strings.Contains(res.Stdout, "step by step through Gateway incr-gateway (NewClusterWithIncrementalUpgrade)") {
		t.Errorf("--dry-run through the Gateway\n%s", res)
	}
	saveUpgrade("incremental-dry-run.txt", res.Stdout)
	// --gateway-service names it instead; a name that is no Service, or a port it lacks, is exit 5 or 2.
	res = h.Run("chaos", "upgrade", "rayservice/incr", "--image", image, "--gateway-service", h.NS+"/"+gw.Service, "--dry-run", "-o", "json")
	if res.Code != 0 || !strings.Contains(res.Stdout, `"target": "service/`+h.NS+"/"+gw.Service+`:80"`) || !strings.Contains(res.Stdout, `"strategy": "NewClusterWithIncrementalUpgrade"`) {
		t.Errorf("--gateway-service --dry-run -o json\n%s", res)
	}
	if res := h.Run("chaos", "upgrade", "rayservice/incr", "--image", image, "--gateway-service", "nowhere", "--dry-run"); res.Code != 5 || !strings.Contains(res.Stderr, `"nowhere" not found`) {
		t.Errorf("--gateway-service naming no Service: want exit 5\n%s", res)
	}
	if res := h.Run("chaos", "upgrade", "rayservice/incr", "--image", image, "--port", "8000", "--dry-run"); res.Code != 2 || !strings.Contains(res.Stderr, "Service "+h.NS+"/"+gw.Service+" has no TCP port 8000: pass --port") {
		t.Errorf("--port the data plane lacks: want exit 2\n%s", res)
	}
	res = h.Run("chaos", "upgrade", "rayservice/incr", "--image", image, "--path", "/fruit",
		"--rate", "20/s", "--warmup", "2s", "--timeout", "2m", "--max-errors", "0", "--yes")
	t.Logf("chaos upgrade through the Gateway:\n%s", res)
	saveUpgrade("incremental-upgrade.txt", res.Stdout)
	if res.Code != 0 {
		t.Fatalf("chaos upgrade through the Gateway: want exit 0\n%s", res)
	}
	wantContains(t, "the report", res.Stdout, "Probe: GET service/"+h.NS+"/incr-gateway-dataplane:80/fruit", "its first traffic", "through Gateway incr-gateway",
		"all traffic on it", "TrafficRouted "+active+` "100%" -> "50%"`, `"50%" -> "100%"`, "ServeTargetCapacity", "ok   switch: traffic switched from "+active,
		"ok   max-errors: 0 errors", "2xx  ")
	served := gw.Served()
	var old, upgraded int
	for backend, n := range served {
		if strings.HasPrefix(backend, active+"-serve-svc.") {
			old += n
		} else {
			upgraded += n
		}
	}
	if old == 0 || upgraded == 0 {
		t.Errorf("through the Gateway, want requests answered by both clusters: %v", served)
	}

	// The RayService has no incr-serve-svc: head-kill aims at the active cluster's own.
	rs, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, "incr", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res = h.Run("chaos", "head-kill", "rayservice/incr", "--dry-run")
	if want := "service/" + rs.Status.ActiveServiceStatus.RayClusterName + "-serve-svc:8000"; res.Code != 0 || !strings.Contains(res.Stdout, want) {
		t.Errorf("head-kill --dry-run of an incremental RayService: want it to probe %s\n%s", want, res)
	}
}

// wantBundledRule bundles the test's namespace as name.tar.gz and wants doctor --from it to report
// rule with a message holding text (with --operator-grace 1s, as the test's live doctor runs);
// it returns the archive's files.
func (h *H) wantBundledRule(name, rule, text string) map[string][]byte {
	h.T.Helper()
	archive := filepath.Join(h.T.TempDir(), name+".tar.gz")
	if res := h.Run("bundle", "-o", archive, "--no-logs", "--ray=false"); res.Code != 0 {
		h.T.Fatalf("bundle: %s", res)
	}
	from := h.Run("doctor", "--from", archive, "-o", "json", "--kubeconfig", "/nonexistent", "--operator-grace", "1s")
	if !strings.Contains(from.Stdout, `"rule": "`+rule+`"`) || !strings.Contains(from.Stdout, text) {
		h.T.Errorf("doctor --from the bundle %s: want %s with %q\n%s", name, rule, text, from)
	}
	files, _ := untarBundle(h.T, archive)
	return files
}

// serviceFinding is the finding of rule about RayService name.
func serviceFinding(t *testing.T, d drDoc, name, rule string) drFinding {
	t.Helper()
	for _, f := range d.Findings {
		if f.Rule == rule && f.RayService != nil && f.RayService.Name == name {
			return f
		}
	}
	t.Fatalf("no %s on RayService %s: %v", rule, name, d.ruleIDs())
	return drFinding{}
}

// updateRayService changes RayService name by mutate.
func (h *H) updateRayService(name string, mutate func(*rayv1.RayService)) {
	h.T.Helper()
	h.WaitFor("RayService "+name+" updated", 30*time.Second, func() (bool, error) {
		rs, err := h.Ray.RayV1().RayServices(h.NS).Get(h.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		mutate(rs)
		_, err = h.Ray.RayV1().RayServices(h.NS).Update(h.Ctx, rs, metav1.UpdateOptions{})
		return err == nil, nil // a conflict with the operator's write: read again
	})
}

// installGatewayAPI installs the Gateway API's standard CRDs for Gateways and HTTPRoutes (and
// GatewayClasses) from the module KubeRay v1.7.0 builds with, and waits until they serve.
func installGatewayAPI(h *H) {
	h.T.Helper()
	out, err := exec.CommandContext(h.Ctx, "go", "mod", "download", "-json", "sigs.k8s.io/gateway-api@"+gatewayAPIVersion).Output()
	if err != nil {
		h.T.Fatalf("the Gateway API's module: %v\n%s", err, out)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		h.T.Fatalf("the Gateway API's module: %v\n%s", err, out)
	}
	applier, err := sandbox.NewApplier(h.SB.Admin)
	if err != nil {
		h.T.Fatal(err)
	}
	for _, kind := range []string{"gatewayclasses", "gateways", "httproutes"} {
		data, err := os.ReadFile(filepath.Join(mod.Dir, "config", "crd", "standard", "gateway.networking.k8s.io_"+kind+".yaml"))
		if err != nil {
			h.T.Fatal(err)
		}
		if _, err := applier.Create(h.Ctx, data, ""); err != nil && !strings.Contains(err.Error(), "already exists") {
			h.T.Fatal(err)
		}
	}
	dyn := dynamic.NewForConfigOrDie(h.SB.Admin)
	h.WaitFor("the Gateway API to serve", 30*time.Second, func() (bool, error) {
		_, err := dyn.Resource(gatewaysGVR).Namespace(h.NS).List(h.Ctx, metav1.ListOptions{})
		return err == nil, nil
	})
}

var (
	gatewaysGVR   = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
	httpRoutesGVR = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}
)

// playGatewayController writes what a gateway controller would: the RayService's Gateway Accepted
// and Programmed, its HTTPRoute's entry for it Accepted and ResolvedRefs (the operator's tests).
func playGatewayController(h *H, rs string) {
	h.T.Helper()
	dyn := dynamic.NewForConfigOrDie(h.SB.Admin)
	now := metav1.Now().UTC().Format(time.RFC3339)
	cond := func(t string, gen int64) map[string]any {
		return map[string]any{"type": t, "status": "True", "reason": t, "message": "played by the e2e test", "lastTransitionTime": now, "observedGeneration": gen}
	}
	h.WaitFor("the Gateway's status to be written", 30*time.Second, func() (bool, error) {
		gw, err := dyn.Resource(gatewaysGVR).Namespace(h.NS).Get(h.Ctx, rs+"-gateway", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		gw.Object["status"] = map[string]any{"conditions": []any{cond("Accepted", gw.GetGeneration()), cond("Programmed", gw.GetGeneration())}}
		_, err = dyn.Resource(gatewaysGVR).Namespace(h.NS).UpdateStatus(h.Ctx, gw, metav1.UpdateOptions{})
		return err == nil, nil
	})
	h.WaitFor("the HTTPRoute's status to be written", 30*time.Second, func() (bool, error) {
		r, err := dyn.Resource(httpRoutesGVR).Namespace(h.NS).Get(h.Ctx, rs+"-httproute", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		parent := map[string]any{"parentRef": map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": rs + "-gateway", "namespace": h.NS},
			"controllerName": "example.com/played-gateway", "conditions": []any{cond("Accepted", r.GetGeneration()), cond("ResolvedRefs", r.GetGeneration())}}
		r.Object["status"] = map[string]any{"parents": []any{parent}}
		_, err = dyn.Resource(httpRoutesGVR).Namespace(h.NS).UpdateStatus(h.Ctx, r, metav1.UpdateOptions{})
		return err == nil, nil
	})
}
