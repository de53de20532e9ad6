package bundle

import (
	"testing"

	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// A bundle says when doctor found no Gateway API, and keeps the Gateways KubeRay made: doctor
// --from reads both back, as incremental-upgrade-blocked needs them.
func TestReadGatewayAPIFacts(t *testing.T) {
	s := &state.Snapshot{}
	if err := addFile(s, "versions.yaml", []byte("client: {version: v0}\noperators: []\ncrds: {groupVersions: []}\ngatewayAPI: absent\n")); err != nil {
		t.Fatal(err)
	}
	gw := "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: svc-gateway, namespace: ml}\nspec: {gatewayClassName: istio, listeners: [{name: http, protocol: HTTP, port: 80}]}\n" +
		"status:\n  conditions:\n  - {type: Accepted, status: Unknown, reason: Pending, message: Waiting for controller, lastTransitionTime: \"1970-01-01T00:00:00Z\"}\n"
	if err := addFile(s, "namespaces/ml/gateways/svc-gateway.yaml", []byte(gw)); err != nil {
		t.Fatal(err)
	}
	if !s.NoGatewayAPI || len(s.Gateways) != 1 || s.Gateways[0].Spec.GatewayClassName != "istio" {
		t.Fatalf("read back: NoGatewayAPI %v, gateways %+v", s.NoGatewayAPI, s.Gateways)
	}
	if ok, why := ray.GatewayReady(&s.Gateways[0]); ok || why != "Accepted=Unknown (Pending: Waiting for controller), Programmed unset" {
		t.Errorf("GatewayReady = %v, %q", ok, why)
	}
}
