package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// A bundle of a head on the real node keeps Ray's own log files (issue 33; kuberay #1047: they
// live in the pod and go with it): one exec of tar in the head's Ray container, through the API
// server to the real kubelet, as kubectl cp copies. The stand-in writes Ray's layout
// (session_latest linking to the session, logs/ under it; docs/sandbox.md), and its GCS log names
// the Redis password given in the head's environment, which must reach the archive redacted. The
// worker is on kwok's node: no exec is tried there. Ray's view comes through the real kubelet's
// port-forward to the stand-in's dashboard, kept as it answered. About 50 to 70 s.
func realBundleRayLogs(t *testing.T, sb *sandbox.Sandbox) {
	h := newHOn(t, sb)
	const password = "rnb-redis-Q7w2"
	h.CreateRayCluster("bundled", func(rc *rayv1.RayCluster) {
		onRealNode(rc)
		headEnv(rc, "REDIS_PASSWORD", password)
	})
	head := h.WaitClusterRunning("bundled", 2*time.Minute)
	if head.Spec.NodeName != sandbox.RealNodeName {
		t.Fatalf("head %s is on %s, want the real node", head.Name, head.Spec.NodeName)
	}
	out := filepath.Join(t.TempDir(), "bundled.tar.gz")
	res := h.Run("bundle", "bundled", "-o", out)
	if res.Code != 0 {
		t.Fatalf("bundle: %s", res)
	}
	files, order := untarBundle(t, out)
	dir := "bundled/ray-logs/" + h.NS + "/" + head.Name + "/"
	for _, name := range []string{"gcs_server.out", "raylet.out", "dashboard.log", "monitor.log"} {
		if _, ok := files[dir+name]; !ok {
			t.Errorf("no %s%s in the archive: %v", dir, name, order)
		}
	}
	gcs := string(files[dir+"gcs_server.out"])
	if !strings.Contains(gcs, "--redis_password=[redacted]") {
		t.Errorf("gcs_server.out does not show the password redacted:\n%s", gcs)
	}
	for name, data := range files {
		if strings.Contains(string(data), password) {
			t.Errorf("%s holds the Redis password", name)
		}
		if strings.Contains(name, "/ray-logs/") && !strings.HasPrefix(name, dir) {
			t.Errorf("Ray log files of a pod other than the head: %s", name)
		}
	}
	// Ray's view, through the real kubelet's port-forward to the stand-in's dashboard: the GCS
	// alive, the version, no Serve applications; the State API's route is not played (404), so the
	// node table's answer is kept as that 404.
	rayDir := "bundled/ray/" + h.NS + "/bundled/"
	if d := string(files[rayDir+"dashboard.yaml"]); !strings.Contains(d, "head: "+head.Name) || strings.Contains(d, "unreachable") ||
		!strings.Contains(string(files[rayDir+"version.json"]), `"ray_commit": "sandbox-stand-in"`) ||
		!strings.Contains(string(files[rayDir+"serve-applications.json"]), `"applications": {}`) || !strings.Contains(d, "code: 404") {
		t.Errorf("Ray's view in the bundle: dashboard.yaml\n%s\nfiles %v", d, order)
	}
	index := string(files["bundled/index.md"])
	if !strings.Contains(index, "| ray-logs/"+h.NS+"/"+head.Name+"/gcs_server.out | Ray's log file gcs_server.out from the head's /tmp/ray/session_latest/logs |") ||
		strings.Contains(index, "read Ray's log files") {
		t.Errorf("index:\n%s", index)
	}
	t.Logf("$ kubectl ray bundle bundled -o bundled.tar.gz\n%s\n%s:\n%s", res.Stdout, dir+"gcs_server.out", gcs)
	h.removeFromRealNode("bundled")
}
