package experiment

import (
	"context"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

type aimFake struct {
	rs       *rayv1.RayService
	services map[string]bool
}

func (f aimFake) GetRayService(context.Context, string, string) (*rayv1.RayService, error) {
	return f.rs, nil
}

func (f aimFake) GetService(_ context.Context, ns, name string) (*corev1.Service, error) {
	if !f.services[name] {
		return nil, fault.Errorf(fault.NotFound, "Service %q not found", name)
	}
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "serve", Port: DefaultServePort}}}}, nil
}

// A RayService upgraded with NewClusterWithIncrementalUpgrade has no <rs>-serve-svc when the
// operator's gate is on: the probe aims at the active cluster's own serve Service instead. With
// the gate off the operator makes <rs>-serve-svc, which is kept; other RayServices never fall back.
func TestAimFallsBackToTheClusterServeService(t *testing.T) {
	incremental := &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.RayServiceNewClusterWithIncrementalUpgrade)}
	for _, c := range []struct {
		name     string
		strategy *rayv1.RayServiceUpgradeStrategy
		services map[string]bool
		want     string
		wantErr  bool
	}{
		{"incremental, gate on", incremental, map[string]bool{"demo-abc-serve-svc": true}, "demo-abc-serve-svc", false},
		{"incremental, gate off", incremental, map[string]bool{"demo-serve-svc": true, "demo-abc-serve-svc": true}, "demo-serve-svc", false},
		{"NewCluster, no serve Service", nil, map[string]bool{"demo-abc-serve-svc": true}, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "demo"}}
			rs.Spec.UpgradeStrategy = c.strategy
			rs.Status.ActiveServiceStatus.RayClusterName = "demo-abc"
			f := aimFake{rs: rs, services: c.services}
			var a Aim
			if _, err := a.ServeOf(context.Background(), f, "ns", "demo"); err != nil {
				t.Fatal(err)
			}
			svc, port, err := a.ProbedService(context.Background(), f, "ns")
			if c.wantErr {
				if fault.KindOf(err) != fault.NotFound {
					t.Fatalf("got %q, %v; want NotFound", svc, err)
				}
				return
			}
			if err != nil || svc != c.want || port != "serve" || a.ProbeTarget(svc) != "service/"+c.want+":8000" {
				t.Errorf("got %q %q %v, want %s", svc, port, err, c.want)
			}
		})
	}
}
