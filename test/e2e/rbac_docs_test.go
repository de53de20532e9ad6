package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// The roles in docs/rbac.md, applied as written, are enough for doctor and heal, and a missing
// verb is exit 4 naming it. Users are impersonated (--as) by the sandbox's admin; the sandbox's
// own read-only context (sandbox-reader) is checked too. The kubelet's eviction is played through
// the API (test/play).
func TestDocsRBACLeastPrivilege(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	applier, err := sandbox.NewApplier(h.SB.Admin)
	if err != nil {
		t.Fatal(err)
	}
	applyDocRoles(h, applier)
	reader, healer, rayReader := "ship-reader-"+h.NS, "ship-healer-"+h.NS, "ship-rayreader-"+h.NS
	bindings := `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: READER}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "kubectl-ray:doctor"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: READER}, {apiGroup: rbac.authorization.k8s.io, kind: User, name: HEALER}, {apiGroup: rbac.authorization.k8s.io, kind: User, name: RAYREADER}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: doctor-ray}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "kubectl-ray:doctor-ray"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: RAYREADER}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: heal}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "kubectl-ray:heal"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: HEALER}]
`
	bindings = strings.NewReplacer("RAYREADER", rayReader, "READER", reader, "HEALER", healer).Replace(bindings)
	if _, err := applier.Create(h.Ctx, []byte(bindings), h.NS); err != nil {
		t.Fatal(err)
	}

	h.CreateRayCluster("rbac", nil)
	head := h.WaitClusterRunning("rbac", 90*time.Second)
	// doctor's Ray view: without kubectl-ray:doctor-ray the port-forward is refused, one warning
	// naming the permission; with it the port-forward is made (no Ray runs here, so nothing
	// answers inside the pod: another reason, not forbidden).
	for _, c := range []struct{ who, reason string }{{reader, "forbidden"}, {rayReader, "unconnected"}} {
		res := h.Run("--as", c.who, "doctor", "rbac", "--ray", "--fail-on", "never", "-o", "json")
		var doc struct {
			Findings []struct {
				Rule     string
				Evidence map[string]string
			}
		}
		if res.Code != 0 || json.Unmarshal([]byte(res.Stdout), &doc) != nil {
			t.Fatalf("doctor --ray as %s: %s", c.who, res)
		}
		var reasons []string
		for _, f := range doc.Findings {
			if f.Rule == "ray-dashboard-unreachable" {
				reasons = append(reasons, f.Evidence["reason"])
			}
		}
		if strings.Join(reasons, ",") != c.reason {
			t.Errorf("doctor --ray as %s: ray-dashboard-unreachable reasons %v, want %s\n%s", c.who, reasons, c.reason, res)
		}
	}
	if _, err := play.KubeletEvict(h.Ctx, h.Kube, h.NS, head.Name, "ephemeral-storage"); err != nil {
		t.Fatal(err)
	}

	// doctor: read-only is enough, and it sees everything (no "could not see" warning).
	for _, who := range [][]string{{"--as", reader}, {"--context", "sandbox-reader"}} {
		res := h.Run(append(who, "doctor", "--fail-on", "never", "-o", "json")...)
		var doc struct {
			Findings []struct{ Rule string }
			Blind    []struct{ Resource string }
		}
		if res.Code != 0 || res.Stderr != "" || json.Unmarshal([]byte(res.Stdout), &doc) != nil {
			t.Fatalf("doctor %v: %s", who, res)
		}
		if len(doc.Blind) != 0 || !hasFinding(doc.Findings, "head-evicted") {
			t.Errorf("doctor %v: blind %v, findings %v; want head-evicted and nothing blind", who, doc.Blind, doc.Findings)
		}
	}
	// doctor -f against the cluster: with doctor's role bound cluster-wide it reads the
	// nodes and predicts that no node holds a head pinned to a pool the sandbox lacks; bound in
	// this namespace only (a namespaced user), the nodes are a gap the report names, and the rule
	// that needs them does not run rather than guess. About 1 s.
	nsReader := "ship-nsreader-" + h.NS
	nsBinding := strings.ReplaceAll(`apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: doctor-here}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "kubectl-ray:doctor"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: NSREADER}]
`, "NSREADER", nsReader)
	if _, err := applier.Create(h.Ctx, []byte(nsBinding), h.NS); err != nil {
		t.Fatal(err)
	}
	pinned := h.sampleCluster("pinned")
	pinned.Spec.HeadGroupSpec.Template.Spec.NodeSelector = map[string]string{"pool": "gpu-a100"}
	file := filepath.Join(t.TempDir(), "pinned.yaml")
	if b, err := yaml.Marshal(pinned); err != nil || os.WriteFile(file, b, 0o644) != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		who   string
		blind bool
	}{{reader, false}, {nsReader, true}} {
		res := h.Run("--as", c.who, "doctor", "-f", file, "--fail-on", "never", "-o", "json")
		var doc struct {
			Findings []struct{ Rule string }
			Blind    []struct{ Resource, Reason string }
		}
		if res.Code != 0 || json.Unmarshal([]byte(res.Stdout), &doc) != nil {
			t.Fatalf("doctor -f as %s: %s", c.who, res)
		}
		var nodesGap bool
		for _, g := range doc.Blind {
			nodesGap = nodesGap || g.Resource == "nodes" && strings.Contains(g.Reason, "forbidden")
		}
		if fits := hasFinding(doc.Findings, "head-fits-no-node"); nodesGap != c.blind || fits == c.blind {
			t.Errorf("doctor -f as %s: nodes gap %v, head-fits-no-node %v; want the gap %v and the finding %v\n%s", c.who, nodesGap, fits, c.blind, !c.blind, res)
		}
	}

	// Nobody: exit 4 naming the verb and resource.
	if res := h.Run("--as", "ship-nobody", "doctor"); res.Code != 4 || !strings.Contains(res.Stderr, `RBAC verb "list" on "rayclusters.ray.io"`) {
		t.Errorf("doctor as a user with no role: want exit 4 naming list rayclusters.ray.io: %s", res)
	}

	// heal without delete: exit 4 naming the verb, and the head is still there.
	for _, who := range [][]string{{"--as", reader}, {"--context", "sandbox-reader"}} {
		res := h.Run(append(who, "heal", "rbac", "--yes")...)
		if res.Code != 4 || !strings.Contains(res.Stdout+res.Stderr, `RBAC verb "delete" on "pods"`) {
			t.Errorf("heal %v without delete: want exit 4 naming delete pods: %s", who, res)
		}
		if _, err := h.Kube.CoreV1().Pods(h.NS).Get(h.Ctx, head.Name, metav1.GetOptions{}); err != nil {
			t.Fatalf("head %s gone after a refused heal: %v", head.Name, err)
		}
	}

	// heal with doctor's role and heal's: the head is replaced, and its evidence kept with nothing
	// forbidden (the logs are missing only because no kubelet serves them on a kwok node).
	if res := h.Run("--as", healer, "heal", "rbac", "--yes", "--timeout", "2m", "--evidence-dir", t.TempDir()); res.Code != 0 || strings.Contains(res.Stdout+res.Stderr, "forbidden") ||
		!strings.Contains(res.Stdout, "kept its evidence") {
		t.Fatalf("heal as %s: want the heal and its evidence with nothing forbidden: %s", healer, res)
	}
	if newHead := h.WaitClusterRunning("rbac", 60*time.Second); newHead.Name == head.Name {
		t.Fatalf("head %s was not replaced", head.Name)
	}
}

// applyDocRoles creates every ClusterRole in docs/rbac.md's yaml blocks, as written.
func applyDocRoles(h *H, applier *sandbox.Applier) {
	h.T.Helper()
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "rbac.md"))
	if err != nil {
		h.T.Fatal(err)
	}
	n := 0
	for _, block := range bytes.Split(md, []byte("```yaml\n"))[1:] {
		doc, _, ok := bytes.Cut(block, []byte("```"))
		if !ok {
			h.T.Fatal("docs/rbac.md: unterminated yaml block")
		}
		if _, err := applier.Create(h.Ctx, doc, ""); err != nil && !strings.Contains(err.Error(), "already exists") {
			h.T.Fatalf("docs/rbac.md block %d: %v", n, err)
		}
		n++
	}
	if n < 2 {
		h.T.Fatalf("docs/rbac.md has %d yaml blocks; want the doctor and heal roles at least", n)
	}
}

// docRole is the yaml block of docs/rbac.md that defines ClusterRole name, as written.
func docRole(h *H, name string) string {
	h.T.Helper()
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "rbac.md"))
	if err != nil {
		h.T.Fatal(err)
	}
	for _, block := range strings.Split(string(md), "```yaml\n")[1:] {
		doc, _, _ := strings.Cut(block, "```")
		if strings.Contains(doc, "  name: "+name+"\n") {
			return doc
		}
	}
	h.T.Fatalf("docs/rbac.md defines no ClusterRole %s", name)
	return ""
}

func hasFinding(findings []struct{ Rule string }, rule string) bool {
	for _, f := range findings {
		if f.Rule == rule {
			return true
		}
	}
	return false
}
