package upgrade

import (
	"context"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
)

func (f *fakeCluster) GetGateway(_ context.Context, _, name string) (*ray.Gateway, error) {
	if f.gateway == nil {
		return nil, fault.Errorf(fault.NotFound, "gateways %q not found", name)
	}
	return f.gateway, nil
}

func (f *fakeCluster) GetHTTPRoute(_ context.Context, _, name string) (*ray.HTTPRoute, error) {
	if f.route == nil {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: ray.GatewayGroup, Resource: "httproutes"}, name)
	}
	return f.route, nil
}

func (f *fakeCluster) ListServices(_ context.Context, _, selector string) ([]corev1.Service, error) {
	if selector != GatewayNameLabel+"=svc-gateway" {
		f.t.Errorf("data plane Services listed by %q", selector)
	}
	return f.dataPlane, nil
}

var readyConds = func(types ...string) []metav1.Condition {
	var out []metav1.Condition
	for _, t := range types {
		out = append(out, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: t})
	}
	return out
}

// newIncrementalFake is newFake's RayService upgraded with NewClusterWithIncrementalUpgrade, its
// Gateway and HTTPRoute ready, and one data plane Service labelled with the Gateway's name.
func newIncrementalFake(t *testing.T) *fakeCluster {
	f := newFake(t)
	f.rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.RayServiceNewClusterWithIncrementalUpgrade),
		ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{GatewayClassName: "istio"}}
	f.rs.Status.ActiveServiceStatus.TargetCapacity, f.rs.Status.ActiveServiceStatus.TrafficRoutedPercent = ptr.To(int32(100)), ptr.To(int32(100))
	f.gateway = &ray.Gateway{}
	f.gateway.Spec.GatewayClassName = "istio"
	f.gateway.Status.Conditions = readyConds("Accepted", "Programmed")
	f.route = &ray.HTTPRoute{}
	f.route.Status.Parents = []ray.RouteParentStatus{{Conditions: readyConds("Accepted", "ResolvedRefs")}}
	f.route.Status.Parents[0].ParentRef.Name = "svc-gateway"
	f.dataPlane = []corev1.Service{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc-gateway-istio"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "status-port", Port: 15021}, {Name: "http", Port: 80}}}}}
	return f
}

// playIncremental plays v1.7.0's steps with maxSurgePercent 100 and stepSizePercent 50: the new
// cluster's capacity to 100, its traffic to 50 then 100, the old cluster's capacity to 0, the
// promotion (the pending status becomes the active one) and the old cluster's deletion.
func (f *fakeCluster) playIncremental() {
	f.status(func(s *rayv1.RayServiceStatuses) {
		s.PendingServiceStatus = rayv1.RayServiceStatus{RayClusterName: "new", TargetCapacity: ptr.To(int32(0)), TrafficRoutedPercent: ptr.To(int32(0)),
			Applications: map[string]rayv1.AppStatus{"app": {Status: rayv1.ApplicationStatusEnum.RUNNING}}}
	})
	head := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "new-head", Labels: map[string]string{ray.LabelCluster: "new", ray.LabelNodeType: "head"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	f.w.OnPod(head, false)
	if f.neverRunning { // held at 0%, then rolled back by a spec put back, as v1.7.0 words it
		f.status(func(s *rayv1.RayServiceStatuses) {
			s.Conditions = []metav1.Condition{{Type: string(rayv1.RollbackInProgress), Status: metav1.ConditionTrue, Reason: "DesiredClusterSpecChanged",
				Message: "Goal state reverted to original cluster, rolling back."}}
		})
		return
	}
	for _, step := range []func(*rayv1.RayServiceStatuses){
		func(s *rayv1.RayServiceStatuses) { s.PendingServiceStatus.TargetCapacity = ptr.To(int32(100)) },
		func(s *rayv1.RayServiceStatuses) {
			s.PendingServiceStatus.TrafficRoutedPercent, s.ActiveServiceStatus.TrafficRoutedPercent = ptr.To(int32(50)), ptr.To(int32(50))
		},
		func(s *rayv1.RayServiceStatuses) {
			s.PendingServiceStatus.TrafficRoutedPercent, s.ActiveServiceStatus.TrafficRoutedPercent = ptr.To(int32(100)), ptr.To(int32(0))
		},
		func(s *rayv1.RayServiceStatuses) { s.ActiveServiceStatus.TargetCapacity = ptr.To(int32(0)) },
		func(s *rayv1.RayServiceStatuses) {
			s.ActiveServiceStatus, s.PendingServiceStatus = s.PendingServiceStatus, rayv1.RayServiceStatus{}
		},
	} {
		f.status(step)
	}
	time.Sleep(50 * time.Millisecond)
	f.w.OnRayCluster(&rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "old"}}, true)
}

func TestRunIncrementalUpgradeThroughTheGateway(t *testing.T) {
	f := newIncrementalFake(t)
	r, outcome, err := Run(context.Background(), f, settings())
	if err != nil {
		t.Fatal(err)
	}
	if !outcome.Passed || r.Settings.Target != "service/ns/svc-gateway-istio:80" {
		t.Fatalf("outcome %+v, target %q: want passed through the Gateway's data plane", outcome, r.Settings.Target)
	}
	u := r.Upgrade
	if u.Strategy != "NewClusterWithIncrementalUpgrade" || u.Gateway != "svc-gateway" || !u.Switched || u.FirstTrafficMs == nil || u.AllTrafficMs == nil ||
		*u.FirstTrafficMs > *u.AllTrafficMs || *u.AllTrafficMs > *u.ActiveSwitchedMs {
		t.Fatalf("upgrade %+v: want the incremental steps in order", u)
	}
	var steps []string
	for _, e := range r.Events {
		if e.Kind == "ServeTargetCapacity" || e.Kind == "TrafficRouted" {
			steps = append(steps, string(e.Kind)+" "+e.Object+" "+e.From+"->"+e.To)
		}
	}
	// Within one status update the active cluster's share comes first.
	want := "ServeTargetCapacity new 0%->100%|TrafficRouted old 100%->50%|TrafficRouted new 0%->50%|TrafficRouted old 50%->0%|TrafficRouted new 50%->100%|ServeTargetCapacity old 100%->0%"
	// The first sighting of each share after the patch (the old cluster's 100%, the new one's 0%)
	// has no From: it is the start, not a step.
	var got []string
	for _, s := range steps {
		if !strings.Contains(s, " ->") {
			got = append(got, s)
		}
	}
	if strings.Join(got, "|") != want {
		t.Errorf("steps\n%s\nwant\n%s", strings.Join(got, "|"), strings.ReplaceAll(want, "|", "\n"))
	}
	var b strings.Builder
	if err := WriteText(&b, r, false); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"its first traffic", "through Gateway svc-gateway", "all traffic on it", "TrafficRouted new \"50%\" -> \"100%\""} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("text report lacks %q:\n%s", w, b.String())
		}
	}
}

// An upgrade the operator would not carry through, or a probe with no way in, changes nothing.
func TestIncrementalRefusals(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*Settings, *fakeCluster)
		want   string
	}{
		{"no Gateway", func(_ *Settings, f *fakeCluster) { f.gateway = nil },
			"has no Gateway svc-gateway: either its operator runs without the RayServiceIncrementalUpgrade feature gate"},
		{"Gateway not programmed", func(_ *Settings, f *fakeCluster) {
			f.gateway.Status.Conditions = []metav1.Condition{{Type: "Accepted", Status: "Unknown", Reason: "Pending", Message: "Waiting for controller"}}
		}, "Gateway ns/svc-gateway is not ready (Accepted=Unknown (Pending: Waiting for controller), Programmed unset): KubeRay moves no capacity"},
		{"HTTPRoute without status", func(_ *Settings, f *fakeCluster) { f.route.Status.Parents = nil },
			"HTTPRoute ns/svc-httproute is not ready (no controller has written a status for Gateway svc-gateway)"},
		{"no data plane Service", func(_ *Settings, f *fakeCluster) { f.dataPlane = nil },
			"no Service of Gateway ns/svc-gateway's data plane was found (none in namespace ns is labelled gateway.networking.k8s.io/gateway-name=svc-gateway"},
		{"two data plane Services", func(_ *Settings, f *fakeCluster) { f.dataPlane = append(f.dataPlane, f.dataPlane[0]) },
			"has 2 data plane Services (svc-gateway-istio, svc-gateway-istio): name the one"},
		{"no port 80", func(_ *Settings, f *fakeCluster) { f.dataPlane[0].Spec.Ports = f.dataPlane[0].Spec.Ports[:1] },
			"Service ns/svc-gateway-istio has no TCP port 80: pass port"},
		{"gateway-service on a NewCluster upgrade", func(s *Settings, f *fakeCluster) { f.rs.Spec.UpgradeStrategy = nil; s.GatewayService = "gw" },
			"gateway-service is for a RayService upgraded with NewClusterWithIncrementalUpgrade"},
		{"bad gateway-service", func(s *Settings, _ *fakeCluster) { s.GatewayService = "a/b/c" }, `gateway-service "a/b/c": give NAMESPACE/NAME or NAME`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newIncrementalFake(t)
			s := settings()
			c.change(&s, f)
			_, _, err := Run(context.Background(), f, s)
			if fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v (kind %v), want Invalid %q", err, fault.KindOf(err), c.want)
			}
			if len(f.patches) != 0 {
				t.Errorf("patched %q despite the refusal", f.patches)
			}
		})
	}
}

// --gateway-service names the data plane Service when none is labelled; --port picks its port.
func TestGatewayServiceFlag(t *testing.T) {
	f := newIncrementalFake(t)
	f.dataPlane = nil
	s := settings()
	s.GatewayService, s.Port = "gw-system/edge", 8080
	p, err := DryRun(context.Background(), f, s)
	if err != nil {
		t.Fatal(err)
	}
	if p.Settings.Target != "service/gw-system/edge:8080" || p.Strategy != "NewClusterWithIncrementalUpgrade" || p.Gateway != "svc-gateway" {
		t.Errorf("plan %+v", p)
	}
}

// An incremental upgrade that never moves: the run ends at --timeout, not passed, and says the
// shares last seen and the rollback.
func TestRunIncrementalStalled(t *testing.T) {
	r, outcome := runNeverRunning(t, newIncrementalFake(t))
	if outcome.Passed || r.Upgrade.Switched || r.Upgrade.FirstTrafficMs != nil {
		t.Fatalf("outcome %+v, upgrade %+v: want a stall, not passed", outcome, r.Upgrade)
	}
	want := "pending cluster new, capacity 0%, traffic 0%, its head Ready, apps app RUNNING; active cluster old, capacity 100%, traffic 100%; rolling back"
	if r.Upgrade.LastSeen != want || !strings.Contains(outcome.Note.Error(), want) {
		t.Errorf("last seen %q\nnote %v\nwant %q", r.Upgrade.LastSeen, outcome.Note, want)
	}
	var rolled bool
	for _, e := range r.Events {
		rolled = rolled || e.Kind == "UpgradeRollingBack" && e.Detail == "Goal state reverted to original cluster, rolling back."
	}
	if !rolled {
		t.Errorf("no UpgradeRollingBack event: %+v", r.Events)
	}
}
