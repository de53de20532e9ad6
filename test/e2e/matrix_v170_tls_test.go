package e2e

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// tls-no-cert-manager: KubeRay v1.7.0's tlsOptions (mTLS through cert-manager; the matrix's
// v1.7.0 sandbox turns RayClusterMTLS on, and runs no cert-manager). The real operator looked for
// cert-manager's API at its start, found none, and refuses a RayCluster with tlsOptions.enabled
// ("tlsOptions requires cert-manager, but cert-manager is not installed"): no head, no workers.
// doctor's spec-invalid quotes it, and its fix is on the operator's side first: install
// cert-manager, then restart the operator. About 2 s.
func matrixTLSNoCertManager(t *testing.T, h *H, v kubeRayVersion) {
	m := objectMap(t, "RayCluster", h.sampleCluster("mtls"))
	m["spec"].(map[string]any)["tlsOptions"] = map[string]any{"enabled": true} // the plugin's API types predate it
	h.createJSON(mustJSON(t, m))
	h.WaitFor("the operator to refuse the RayCluster", 60*time.Second, func() (bool, error) {
		l, err := h.Kube.CoreV1().Events(h.NS).List(h.Ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=mtls,reason=InvalidRayClusterSpec"})
		return err == nil && len(l.Items) > 0, err
	})
	d, res := h.doctorJSON("--operator-grace", "1s")
	f := d.finding(t, "mtls", "spec-invalid")
	wantContains(t, "spec-invalid", f.Message, "tlsOptions requires cert-manager, but cert-manager is not installed")
	wantContains(t, "spec-invalid's remedy", f.Remedy, "install cert-manager, then restart the KubeRay operator (kubectl rollout restart deploy/kuberay-operator -n kuberay-system)")
	if got := d.rules("mtls"); len(got) != 1 || res.Code != 1 {
		t.Errorf("KubeRay %s: want spec-invalid alone on the refused cluster, exit 1; got %v, %s", v.version, got, res)
	}
}
