package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// tokenRayVersion is the first Ray with token authentication, which KubeRay's validation asks
// spec.rayVersion to reach when authOptions.mode is token.
const tokenRayVersion = "2.52.0"

// objectMap is obj (a typed KubeRay object) as the map of its JSON, with its kind: what a test
// changes where the plugin's KubeRay API types predate a field.
func objectMap(t *testing.T, kind string, obj any) map[string]any {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["apiVersion"], m["kind"] = "ray.io/v1", kind
	return m
}

// mustJSON is m's JSON.
func mustJSON(t *testing.T, m map[string]any) []byte {
	t.Helper()
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withTokenAuth is obj (a RayCluster, or a RayService with the cluster spec at
// spec.rayClusterConfig) with authOptions {mode: token}, as the object to create.
func withTokenAuth(t *testing.T, kind string, obj any) []byte {
	t.Helper()
	m := objectMap(t, kind, obj)
	spec := m["spec"].(map[string]any)
	if kind == "RayService" {
		spec = spec["rayClusterConfig"].(map[string]any)
	}
	spec["authOptions"] = map[string]any{"mode": "token"}
	return mustJSON(t, m)
}

// onTokenRay sets spec's Ray version and every image to Ray 2.52.0.
func onTokenRay(spec *rayv1.RayClusterSpec) {
	spec.RayVersion = tokenRayVersion
	image := "rayproject/ray:" + tokenRayVersion
	spec.HeadGroupSpec.Template.Spec.Containers[0].Image = image
	for i := range spec.WorkerGroupSpecs {
		spec.WorkerGroupSpecs[i].Template.Spec.Containers[0].Image = image
	}
}

func (h *H) createJSON(doc []byte) {
	h.T.Helper()
	applier, err := sandbox.NewApplier(h.SB.Admin)
	if err != nil {
		h.T.Fatal(err)
	}
	if _, err := applier.Create(h.Ctx, doc, h.NS); err != nil {
		h.T.Fatal(err)
	}
}

// authFindings are d's ray-dashboard-auth findings as "reason: message", and whether Ray's view
// showed a worker DEAD (ray-node-dead).
func authFindings(d drDoc) (auth []string, dead bool) {
	for _, f := range d.Findings {
		switch f.Rule {
		case "ray-dashboard-auth":
			auth = append(auth, f.Evidence["reason"]+": "+f.Message)
		case "ray-node-dead":
			dead = true
		}
	}
	return auth, dead
}

// matrixRayTokenAuth: a RayCluster with Ray's token authentication (authOptions.mode token, KubeRay
// v1.6.0 and v1.7.0). The real operator makes the Secret and gives the head RAY_AUTH_TOKEN from
// it; the Ray stand-ins hold that token and refuse every read but the health checks without it
// (PlayDashboardTokenAuth, PlayNodeTable). doctor reads the token where the head gets it and sees
// the worker Ray marked DEAD, as does the bundle's report; a user whose role lacks get on the
// Secret, and a token Ray no longer holds, each get one ray-dashboard-auth finding, not a healthy
// Ray. No byte of any output, of the bundle's files or of the bundle itself holds the token.
// About 30 s.
func matrixRayTokenAuth(t *testing.T, h *H, v kubeRayVersion) {
	ray := startRay(h, play.RayOptions{})
	rc := h.sampleCluster("auth")
	onTokenRay(&rc.Spec)
	h.createJSON(withTokenAuth(t, "RayCluster", rc))
	h.WaitClusterRunning("auth", 90*time.Second)
	workers := h.waitReadyWorkers("auth", 1, 60*time.Second, nil)
	secret, err := h.Kube.CoreV1().Secrets(h.NS).Get(h.Ctx, "auth", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("KubeRay %s makes the cluster's token Secret (reconcileAuthSecret): %v", v.version, err)
	}
	token := string(secret.Data["auth_token"])
	if len(token) < 16 {
		t.Fatalf("the operator's Secret holds no token: %q", secret.Data)
	}
	ray.MarkDead(workers[0])
	var outputs []string
	keep := func(r Result) Result { outputs = append(outputs, r.Stdout, r.Stderr); return r }

	// The token read where the head gets it: Ray's view, with its DEAD worker.
	h.WaitFor("doctor to read Ray's view with the cluster's token", 30*time.Second, func() (bool, error) {
		d, res := h.doctorJSON("auth", "--fail-on", "never")
		keep(res)
		auth, dead := authFindings(d)
		if len(auth) > 0 && !strings.Contains(auth[0], "nothing answers") {
			t.Fatalf("KubeRay %s: doctor had the token's Secret to read, and says %v", v.version, auth)
		}
		return dead, nil
	})

	// The bundle: Ray's view is the one read with the token, and the token is in none of it.
	dir := t.TempDir()
	path := filepath.Join(dir, "auth.tar.gz")
	if res := keep(h.Run("bundle", "auth", "-o", path)); res.Code != 0 {
		t.Fatalf("bundle: %s", res)
	}
	files, _ := untarBundle(t, path)
	var nodesSaved bool
	for name, b := range files {
		if strings.Contains(string(b), token) {
			t.Errorf("the token is in the bundle's %s", name)
		}
		nodesSaved = nodesSaved || strings.Contains(name, "/ray/") && strings.Contains(string(b), `"DEAD"`)
	}
	if !nodesSaved {
		t.Errorf("the bundle did not keep Ray's node table read with the token")
	}
	if raw, err := os.ReadFile(path); err != nil || strings.Contains(string(raw), token) {
		t.Errorf("the archive's bytes hold the token (%v)", err)
	}

	save("doctor-ray-token.txt", keep(h.Run("doctor", "auth", "--fail-on", "never")).Stdout)

	// Without get on the Secret: one finding naming the verb and the resource.
	applyDocRoles(h, mustApplier(h))
	reader := "ray-reader-" + h.NS
	h.createJSON([]byte(strings.ReplaceAll(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"ray-reader"},
"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"kubectl-ray:doctor"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"READER"}]}
{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"ray-reader-forward"},
"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"kubectl-ray:doctor-ray"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"READER"}]}`, "READER", reader)))
	res := keep(h.Run("--as", reader, "doctor", "auth", "-o", "json", "--fail-on", "warning"))
	var d drDoc
	if err := json.Unmarshal([]byte(res.Stdout), &d); err != nil || res.Code != 1 {
		t.Fatalf("doctor as %s: want exit 1 (a warning with --fail-on warning): %v %s", reader, err, res)
	}
	save("doctor-ray-token-forbidden.txt", keep(h.Run("--as", reader, "doctor", "auth", "--fail-on", "never")).Stdout)
	auth, dead := authFindings(d)
	if len(auth) != 1 || dead || !strings.HasPrefix(auth[0], "token-forbidden: ") ||
		!strings.Contains(auth[0], `you cannot get secrets "auth" in namespace "`+h.NS+`"`) || !strings.Contains(auth[0], `ask for RBAC verb "get" on "secrets" named auth`) {
		t.Errorf("doctor as %s: want one token-forbidden finding naming get on secrets, got %v", reader, auth)
	}

	// A token Ray does not hold (the Secret replaced after the head started): Ray's 403, said.
	secret.Data["auth_token"] = []byte("a-token-the-head-never-read-0000")
	if _, err := h.Kube.CoreV1().Secrets(h.NS).Update(h.Ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	d, res = h.doctorJSON("auth", "--fail-on", "never")
	keep(res)
	save("doctor-ray-token-refused.txt", keep(h.Run("doctor", "auth", "--fail-on", "never")).Stdout)
	auth, dead = authFindings(d)
	if len(auth) != 1 || dead || !strings.HasPrefix(auth[0], "refused: ") || !strings.Contains(auth[0], "HTTP 403: Forbidden: Invalid authentication token") {
		t.Errorf("a token Ray does not hold: want one refused finding with Ray's 403, got %v", auth)
	}

	// A bundle taken now keeps the refusal; doctor --from replays it as the same finding.
	refusedBundle := filepath.Join(dir, "refused.tar.gz")
	if res := keep(h.Run("bundle", "auth", "-o", refusedBundle)); res.Code != 0 {
		t.Fatalf("bundle: %s", res)
	}
	from := keep(h.Run("doctor", "--from", refusedBundle, "-o", "json", "--fail-on", "never", "--kubeconfig", "/nonexistent"))
	var offline drDoc
	if err := json.Unmarshal([]byte(from.Stdout), &offline); err != nil {
		t.Fatalf("doctor --from: %v %s %s", err, from, from.Stderr)
	}
	if got, _ := authFindings(offline); strings.Join(got, "") != strings.Join(auth, "") {
		t.Errorf("doctor --from the bundle says %v; live doctor said %v", got, auth)
	}

	for _, out := range outputs {
		if strings.Contains(out, token) {
			t.Fatalf("the token is in an output of the tool:\n%s", out)
		}
	}
	if err := ray.Err(); err != nil {
		t.Errorf("Ray stand-ins: %v", err)
	}
}

// createTokenRayService creates the version's ray-service.sample.yaml named name, changed by
// mutate, on Ray 2.52.0 with authOptions {mode: token}; the operator then talks to the
// dashboard with the cluster's token. It returns the active RayCluster once the RayService is Ready.
func (h *H) createTokenRayService(name, version string, mutate func(*rayv1.RayService)) string {
	h.T.Helper()
	rs := h.sampleRayService(name, version, func(rs *rayv1.RayService) {
		onTokenRay(&rs.Spec.RayClusterSpec)
		if mutate != nil {
			mutate(rs)
		}
	})
	h.createJSON(withTokenAuth(h.T, "RayService", rs))
	return h.waitRayServiceActive(name)
}

func mustApplier(h *H) *sandbox.Applier {
	h.T.Helper()
	a, err := sandbox.NewApplier(h.SB.Admin)
	if err != nil {
		h.T.Fatal(err)
	}
	return a
}

// clusterToken is the token of the Secret KubeRay makes for a cluster with token authentication
// (reconcileAuthSecret), which no output of the tool may hold.
func (h *H) clusterToken(cluster string) string {
	h.T.Helper()
	secret, err := h.Kube.CoreV1().Secrets(h.NS).Get(h.Ctx, cluster, metav1.GetOptions{})
	if err != nil || len(secret.Data["auth_token"]) == 0 {
		h.T.Fatalf("the operator's token Secret %s: %v", cluster, err)
	}
	return string(secret.Data["auth_token"])
}
