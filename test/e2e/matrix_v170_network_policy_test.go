package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/test/play"
)

// network-policy-dns: KubeRay v1.7.0's spec.networkPolicy, made into NetworkPolicies by its real
// NetworkPolicy controller (alpha; the matrix's v1.7.0 sandbox turns RayClusterNetworkPolicy
// on). KubeRay's own network-policy-deny-all sample with its workers' DNS rule taken out: mode
// DenyAll, and the worker policy lets egress reach the cluster's pods only. doctor -f says so
// before it is applied, naming the policy the operator then makes; the unmodified sample is
// silent. Live, no network plugin enforces the policy here, so the kubelet's side is played:
// the worker's wait-gcs-ready keeps running (play.KubeletInitWaiting), as it does when the
// head Service's name does not resolve. doctor names the cause, a bundle keeps the policy and
// the RayCluster as served (its networkPolicy too), and doctor --from finds it again; with the
// DNS rule put back the operator rewrites its policy and the rule is silent. About 12 s.
func matrixNetworkPolicyDNS(t *testing.T, h *H, v kubeRayVersion) {
	m, samplePath := h.operatorSample(v.version, "ray-cluster.network-policy-deny-all.yaml")
	m["metadata"] = map[string]any{"name": "np", "namespace": h.NS}
	np := m["spec"].(map[string]any)["networkPolicy"].(map[string]any)
	workerRules := np["worker"]
	delete(np, "worker") // the workers' DNS rule, and with it every egress rule of theirs
	file := filepath.Join(t.TempDir(), "np.yaml")
	out, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}

	fd, res := h.doctorJSON("-f", file)
	pf := fd.finding(t, "np", "network-policy-blocks-dns")
	wantContains(t, "doctor -f", pf.Message, "workers of group workergroup will wait for their head for ever", "NetworkPolicy np-workers-workergroup isolates their egress")
	if pf.Evidence["mode"] != "DenyAll" || pf.Field != "spec.networkPolicy" || pf.Severity != "error" || res.Code != 1 {
		t.Errorf("doctor -f: want an error about spec.networkPolicy, mode DenyAll, exit 1; got %+v, %s", pf, res)
	}
	if sd, res := h.doctorJSON("-f", samplePath); slices.ContainsFunc(sd.Findings, func(f drFinding) bool { return f.Rule == "network-policy-blocks-dns" }) {
		t.Errorf("KubeRay's sample, with its DNS rules, must be silent: %s", res)
	}

	h.createJSON(mustJSON(t, m))
	h.WaitFor("the operator's NetworkPolicies", 60*time.Second, func() (bool, error) {
		l, err := h.Kube.NetworkingV1().NetworkPolicies(h.NS).List(h.Ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		var names []string
		for _, p := range l.Items {
			names = append(names, p.Name)
		}
		return slices.Contains(names, "np-head") && slices.Contains(names, pf.Evidence["kuberayPolicies"]), nil
	})
	h.WaitClusterRunning("np", 90*time.Second)
	h.WaitFor("a worker pod on a node", 60*time.Second, func() (bool, error) {
		for _, p := range h.Pods("np", "worker") {
			if p.Spec.NodeName != "" && p.Status.PodIP != "" {
				return true, nil
			}
		}
		return false, nil
	})
	workers := h.Pods("np", "worker")
	for _, w := range workers {
		if _, err := play.KubeletInitWaiting(h.Ctx, h.Kube, h.NS, w.Name); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1500 * time.Millisecond) // past --workers-not-ready-window 1s

	d, res := h.doctorJSON("--workers-not-ready-window", "1s")
	f := d.finding(t, "np", "network-policy-blocks-dns")
	wantContains(t, "doctor", f.Message, "worker(s) of group workergroup have waited", "NetworkPolicy np-workers-workergroup isolates their egress", "DNS (port 53)")
	wantContains(t, "the remedy", f.Remedy, "spec.networkPolicy.worker.egressRules", "k8s-app: kube-dns")
	if f.Evidence["workers"] != workers[0].Name || res.Code != 1 {
		t.Errorf("doctor: want the waiting worker %s and exit 1; got %v, %s", workers[0].Name, f.Evidence, res)
	}
	archive := filepath.Join(t.TempDir(), "np.tar.gz")
	if res := h.Run("bundle", "np", "-o", archive, "--no-ray-logs", "--ray=false"); res.Code != 0 {
		t.Fatalf("bundle: %s", res)
	}
	// The RayCluster's file is the object as served: spec.networkPolicy, which the plugin's API
	// types predate, is in it.
	files, _ := untarBundle(t, archive)
	var rcFile []byte
	for name, b := range files {
		if strings.HasSuffix(name, "/namespaces/"+h.NS+"/rayclusters/np.json") {
			rcFile = b
		}
	}
	if !strings.Contains(string(rcFile), `"networkPolicy":`) || !strings.Contains(string(rcFile), `"mode": "DenyAll"`) {
		t.Errorf("the bundle's RayCluster lost spec.networkPolicy:\n%s", rcFile)
	}
	from := h.Run("doctor", "--from", archive, "-o", "json", "--workers-not-ready-window", "1s", "--kubeconfig", "/nonexistent")
	if !strings.Contains(from.Stdout, `"rule": "network-policy-blocks-dns"`) {
		t.Errorf("doctor --from the bundle lost the policy's finding: %s", from)
	}
	if hd, res := h.healJSON("--dry-run"); len(hd.Plan.Actions) != 0 {
		t.Errorf("heal must leave network-policy-blocks-dns to the user: %s", res)
	}

	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"networkPolicy": map[string]any{"worker": workerRules}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Ray.RayV1().RayClusters(h.NS).Patch(h.Ctx, "np", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the operator to rewrite its worker policy with the DNS rule", 60*time.Second, func() (bool, error) {
		p, err := h.Kube.NetworkingV1().NetworkPolicies(h.NS).Get(h.Ctx, "np-workers-workergroup", metav1.GetOptions{})
		return err == nil && egressToPort(p, 53), err
	})
	if d, res := h.doctorJSON("--workers-not-ready-window", "1s"); slices.ContainsFunc(d.Findings, func(f drFinding) bool { return f.Rule == "network-policy-blocks-dns" }) {
		t.Errorf("with the DNS rule back, the rule must be silent: %s", res)
	}
}

// egressToPort says whether one of p's egress rules names port.
func egressToPort(p *networkingv1.NetworkPolicy, port int32) bool {
	for _, r := range p.Spec.Egress {
		for _, pp := range r.Ports {
			if pp.Port != nil && pp.Port.IntVal == port {
				return true
			}
		}
	}
	return false
}
