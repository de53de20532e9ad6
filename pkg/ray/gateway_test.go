package ray

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIncrementalUpgradeOnByReleaseAndGate(t *testing.T) {
	for _, tc := range []struct {
		version, gates string
		on, known      bool
	}{
		{"v1.7.0", "", true, true},                                    // beta, on by default
		{"v1.7.0", "RayServiceIncrementalUpgrade=false", false, true}, // turned off
		{"v1.6.0", "", false, true},                                   // alpha, off by default
		{"v1.6.0", "RayServiceIncrementalUpgrade=true", true, true},
		{"v1.4.2", "RayServiceIncrementalUpgrade=true", false, true}, // no such gate yet
		{"", "", false, false},
		{"", "RayServiceIncrementalUpgrade=true", true, true},
	} {
		on, known := Operator{Version: tc.version, FeatureGates: tc.gates}.IncrementalUpgradeOn()
		if on != tc.on || known != tc.known {
			t.Errorf("%s %q: on=%v known=%v, want %v %v", tc.version, tc.gates, on, known, tc.on, tc.known)
		}
	}
}

func TestRouteReadyReadsItsGatewaysEntry(t *testing.T) {
	ns := "ml"
	yes := []metav1.Condition{{Type: "Accepted", Status: "True"}, {Type: "ResolvedRefs", Status: "True"}}
	refused := []metav1.Condition{{Type: "Accepted", Status: "False", Reason: "NotAllowedByListeners", Message: "no listener allows it"}, {Type: "ResolvedRefs", Status: "True"}}
	entry := func(gw string, gwNS *string, conds []metav1.Condition) RouteParentStatus {
		var p RouteParentStatus
		p.ParentRef.Name, p.ParentRef.Namespace, p.Conditions = gw, gwNS, conds
		return p
	}
	other := "other"
	for _, tc := range []struct {
		name    string
		parents []RouteParentStatus
		ok      bool
		why     string
	}{
		{"accepted", []RouteParentStatus{entry("svc-gateway", nil, yes)}, true, ""},
		{"refused", []RouteParentStatus{entry("svc-gateway", &ns, refused)}, false, "Accepted=False (NotAllowedByListeners: no listener allows it)"},
		{"another gateway's entry", []RouteParentStatus{entry("svc-gateway", &other, yes)}, false, "no controller has written a status for Gateway svc-gateway"},
		{"no entry", nil, false, "no controller has written a status for Gateway svc-gateway"},
	} {
		r := &HTTPRoute{}
		r.Status.Parents = tc.parents
		if ok, why := RouteReady(r, "svc-gateway", ns); ok != tc.ok || why != tc.why {
			t.Errorf("%s: %v %q, want %v %q", tc.name, ok, why, tc.ok, tc.why)
		}
	}
}
