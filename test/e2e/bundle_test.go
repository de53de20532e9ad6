package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// untarBundle reads every file of a bundle: name -> bytes, and the names in archive order.
func untarBundle(t *testing.T, path string) (map[string][]byte, []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	var order []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files, order
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = b
		order = append(order, hdr.Name)
	}
}

// kubectl ray bundle through the real binary, on the shared KubeRay v1.1.1 sandbox: a cluster
// whose head carries a secret in each place a pod spec can (an env value, a Secret reference, a
// Redis password in rayStartParams, credentials and a token in runtime_env and pip URLs) is
// bundled; the archive holds the expected files and none of the secrets; the kwok nodes have no
// kubelet to serve logs, so each log read fails and the index says so (one failing read never
// aborts the bundle); a NAME that does not exist is exit 5 and an existing -o without --force
// exit 2, the file untouched; the roles of docs/rbac.md are enough, and without the bundle's the
// index names what was refused.
func TestBundle(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	secrets := map[string]string{
		"env value":             "bndl-env-Vx81q",
		"secretKeyRef name":     "bndl-secretref-qz22w",
		"redis-password":        "bndl-redis-Wm33e",
		"pip index credentials": "bndl-pip-Tk44r",
		"runtime_env URL token": "bndl-query-Jp55t",
	}
	startRay(h, play.RayOptions{}) // the head's dashboard, played (docs/sandbox.md)
	h.CreateRayCluster("bndl", func(rc *rayv1.RayCluster) {
		c := &rc.Spec.HeadGroupSpec.Template.Spec.Containers[0]
		optional := true
		c.Env = append(c.Env,
			corev1.EnvVar{Name: "API_TOKEN", Value: secrets["env value"]},
			corev1.EnvVar{Name: "DB_CREDENTIALS", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: secrets["secretKeyRef name"]}, Key: "password", Optional: &optional}}},
			corev1.EnvVar{Name: "PIP_INDEX_URL", Value: "https://ci:" + secrets["pip index credentials"] + "@pypi.internal/simple"},
			corev1.EnvVar{Name: "RAY_RUNTIME_ENV", Value: `{"working_dir": "https://example.com/w.zip?access_token=` + secrets["runtime_env URL token"] + `"}`},
		)
		if rc.Spec.HeadGroupSpec.RayStartParams == nil {
			rc.Spec.HeadGroupSpec.RayStartParams = map[string]string{}
		}
		rc.Spec.HeadGroupSpec.RayStartParams["redis-password"] = secrets["redis-password"]
	})
	head := h.WaitClusterRunning("bndl", 90*time.Second)
	dir := t.TempDir()
	out := filepath.Join(dir, "bndl.tar.gz")

	start := time.Now()
	res := h.Run("bundle", "bndl", "-o", out)
	t.Logf("bundle of one cluster: %s", time.Since(start).Round(time.Millisecond))
	if res.Code != 0 || !strings.Contains(res.Stdout, "wrote "+out) || res.Stderr != "" {
		t.Fatalf("bundle: want exit 0, the archive written and nothing on stderr (not a terminal): %s", res)
	}
	files, order := untarBundle(t, out)
	if order[0] != "bndl/index.md" {
		t.Errorf("the archive starts with %s, want bndl/index.md", order[0])
	}
	ns := "bndl/namespaces/" + h.NS + "/"
	for _, want := range []string{"bndl/doctor.txt", "bndl/doctor.json", "bndl/versions.yaml",
		ns + "rayclusters/bndl.json", ns + "pods/" + head.Name + ".json", ns + "services/bndl-head-svc.json",
		ns + "events.json", ns + "events.txt", "bndl/nodes/" + head.Spec.NodeName + ".json"} {
		if _, ok := files[want]; !ok {
			t.Errorf("no %s in the archive: %v", want, order)
		}
	}
	var all bytes.Buffer
	for _, name := range order {
		all.WriteString(name)
		all.Write(files[name])
	}
	for where, s := range secrets {
		if bytes.Contains(all.Bytes(), []byte(s)) {
			for _, name := range order {
				if bytes.Contains(files[name], []byte(s)) {
					t.Errorf("the planted secret (%s) is in %s", where, name)
				}
			}
		}
	}
	if rc := string(files[ns+"rayclusters/bndl.json"]); !strings.Contains(rc, "API_TOKEN") || !strings.Contains(rc, "[redacted]") {
		t.Errorf("the RayCluster should be there with its secrets redacted:\n%s", rc)
	}
	if v := string(files["bndl/versions.yaml"]); !strings.Contains(v, "version: v0.0.0-e2e") || !strings.Contains(v, "ray.io/v1") ||
		!strings.Contains(v, "v1.1.1") || !strings.Contains(v, "server: v1.") {
		t.Errorf("versions.yaml lacks the client, API server, operator or CRD versions:\n%s", v)
	}
	// kwok plays the nodes and no kubelet serves logs: every log read fails, and says so.
	index := string(files["bndl/index.md"])
	t.Logf("$ kubectl ray bundle bndl -o bndl.tar.gz\n%s\nindex.md:\n%s\ndoctor.txt:\n%s", res.Stdout, index, files["bndl/doctor.txt"])
	if !strings.Contains(index, "read Ray's log files of "+h.NS+"/"+head.Name+" (tar of /tmp/ray/session_latest/logs in container ray-head): ") ||
		!strings.Contains(index, "could not exec through the node's kubelet") {
		t.Errorf("the index should list the exec in the head on kwok's node as failed:\n%s", index)
	}
	if !strings.Contains(index, "read the log of "+h.NS+"/"+head.Name+" container ray-head: ") || !strings.Contains(index, "could not get the log from the node's kubelet") ||
		!strings.Contains(res.Stdout, "reads failed") {
		t.Errorf("the index should list the head's log read as failed:\n%s", index)
	}
	// Ray's view of a named cluster, kept as the dashboard answered through the port-forward:
	// the GCS alive, the node table, Serve, the jobs, the autoscaler.
	rayDir := "bndl/ray/" + h.NS + "/bndl/"
	if d := string(files[rayDir+"dashboard.yaml"]); !strings.Contains(d, "head: "+head.Name) || !strings.Contains(d, "file: v0-nodes.json") ||
		strings.Contains(d, "unreachable") || string(files[rayDir+"gcs_healthz.txt"]) != "success" || len(files[rayDir+"v0-nodes.json"]) == 0 {
		t.Errorf("Ray's view in the bundle: dashboard.yaml\n%s\nfiles %v", d, order)
	}
	for _, f := range order {
		if strings.HasPrefix(f, "bndl/logs/") {
			t.Errorf("a log was written although no kubelet serves logs here: %s", f)
		}
	}

	// An existing archive is not overwritten without --force.
	before, _ := os.ReadFile(out)
	if res := h.Run("bundle", "bndl", "-o", out); res.Code != 2 || strings.Count(res.Stderr, "\n") != 1 || !strings.Contains(res.Stderr, "--force") {
		t.Errorf("bundle over an existing file: want exit 2 and one line naming --force: %s", res)
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(before, after) {
		t.Errorf("the existing archive was changed")
	}
	// A NAME that does not exist: one line, exit 5, nothing written.
	missing := filepath.Join(dir, "nope.tar.gz")
	if res := h.Run("bundle", "nope", "-o", missing); res.Code != 5 || strings.Count(res.Stderr, "\n") != 1 || !strings.Contains(res.Stderr, `"nope" not found`) {
		t.Errorf("bundle of a missing NAME: want exit 5 and one line: %s", res)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("a bundle of a missing NAME was written")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left in the output directory: %v", entries)
	}
	// A negative --ray-log-bytes: one line, exit 2, nothing read or written.
	other := t.TempDir()
	if res := h.Run("bundle", "bndl", "-o", filepath.Join(other, "neg.tar.gz"), "--ray-log-bytes", "-1"); res.Code != 2 ||
		strings.Count(res.Stderr, "\n") != 1 || !strings.Contains(res.Stderr, "--ray-log-bytes") {
		t.Errorf("bundle --ray-log-bytes -1: want exit 2 and one line naming the flag: %s", res)
	}
	// A sweep asks no dashboard unless --ray, and --no-ray-logs makes no exec: with both, the
	// dashboard's answers are there and no read of Ray's log files was tried.
	sweep := filepath.Join(other, "sweep.tar.gz")
	if res := h.Run("bundle", "-o", sweep, "--ray", "--no-ray-logs"); res.Code != 0 {
		t.Fatalf("bundle --ray --no-ray-logs: %s", res)
	}
	swept, sweptOrder := untarBundle(t, sweep)
	if idx := string(swept["sweep/index.md"]); strings.Contains(idx, "read Ray's log files") || !strings.Contains(idx, "Ray's log files were left out (--no-ray-logs).") {
		t.Errorf("bundle --no-ray-logs: the index should say Ray's log files were not read, and list no exec:\n%s", idx)
	}
	if _, ok := swept["sweep/ray/"+h.NS+"/bndl/gcs_healthz.txt"]; !ok {
		t.Errorf("bundle --ray of the namespace: no dashboard answers of bndl: %v", sweptOrder)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 1 {
		t.Errorf("files in %s: want the sweep's archive alone: %v", other, entries)
	}

	// RBAC: docs/rbac.md's roles as written. With doctor's (and its Ray role) and the bundle's, nothing is refused
	// (the log reads still fail: no kubelet); with doctor's alone, the index names the refusals.
	applier, err := sandbox.NewApplier(h.SB.Admin)
	if err != nil {
		t.Fatal(err)
	}
	applyDocRoles(h, applier)
	bundler, reader := "bundler-"+h.NS, "bundle-reader-"+h.NS
	bindings := `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: BUNDLER-doctor}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "kubectl-ray:doctor"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: BUNDLER}, {apiGroup: rbac.authorization.k8s.io, kind: User, name: READER}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: BUNDLER-doctor-ray}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "kubectl-ray:doctor-ray"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: BUNDLER}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bundle}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "kubectl-ray:bundle"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: BUNDLER}]
`
	bindings = strings.NewReplacer("BUNDLER", bundler, "READER", reader).Replace(bindings)
	if _, err := applier.Create(h.Ctx, []byte(bindings), h.NS); err != nil {
		t.Fatal(err)
	}
	// The operator's log is read in the operator's namespace: the bundle's role there too.
	operatorBinding := strings.NewReplacer("BUNDLER", bundler).Replace(`apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: BUNDLER}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "kubectl-ray:bundle"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: BUNDLER}]
`)
	if _, err := applier.Create(h.Ctx, []byte(operatorBinding), sandbox.OperatorNamespace); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		who       string
		forbidden []string
	}{
		{bundler, nil},
		// doctor's role alone: the budgets are the snapshot's, which that role lists.
		{reader, []string{`ask for RBAC verb "get" on "pods/log"`, `ask for RBAC verb "create" on "pods/exec"`, "Ray's dashboard could not be read: forbidden"}},
	} {
		path := filepath.Join(dir, c.who+".tar.gz")
		res := h.Run("--as", c.who, "bundle", "bndl", "-o", path)
		if res.Code != 0 {
			t.Errorf("bundle as %s: %s", c.who, res)
			continue
		}
		files, _ := untarBundle(t, path)
		index := string(files[c.who+"/index.md"])
		for _, f := range c.forbidden {
			if !strings.Contains(index, f) {
				t.Errorf("bundle as %s: the index does not say %q:\n%s", c.who, f, index)
			}
		}
		if c.forbidden == nil && strings.Contains(index, "forbidden") {
			t.Errorf("bundle as %s (docs/rbac.md's roles): something was refused:\n%s", c.who, index)
		}
	}

	// doctor --from: the bundle of an evicted head (the kubelet's eviction, played: v1.1.1 leaves the
	// head Failed) gives, offline, the findings live doctor gives, and those of the bundle's own
	// doctor.json word for word. Both ask Ray about the named cluster: its evicted head leaves no
	// dashboard to reach, which the bundle keeps and --from replays.
	if _, err := play.KubeletEvict(h.Ctx, h.Kube, h.NS, head.Name, "memory"); err != nil {
		t.Fatal(err)
	}
	evicted := filepath.Join(dir, "evicted.tar.gz")
	if res := h.Run("bundle", "bndl", "-o", evicted); res.Code != 0 {
		t.Fatalf("bundle of the evicted head: %s", res)
	}
	live := h.Run("doctor", "bndl", "-o", "json", "--fail-on", "never")
	from := h.Run("doctor", "--from", evicted, "-o", "json", "--fail-on", "never", "--kubeconfig", "/nonexistent")
	if live.Code != 0 || from.Code != 0 {
		t.Fatalf("doctor live and --from: %s\n%s", live, from)
	}
	files, _ = untarBundle(t, evicted)
	got, want, kept := bundleFindings(t, from.Stdout, true), bundleFindings(t, live.Stdout, false), bundleFindings(t, string(files["evicted/doctor.json"]), true)
	t.Logf("doctor --from %s:\n%s", filepath.Base(evicted), got)
	if bundleFindings(t, from.Stdout, false) != want || got != kept || !strings.Contains(got, "head-evicted") || !strings.Contains(got, "ray-dashboard-unreachable") {
		t.Errorf("doctor --from found\n%s\nlive (rules and objects)\n%s\nthe bundle's doctor.json\n%s", got, want, kept)
	}
}

// bundleFindings is each finding of a doctor -o json document, one a line: its rule and object,
// and with messages its message (a live run a moment later words ages differently).
func bundleFindings(t *testing.T, doc string, messages bool) string {
	t.Helper()
	var d struct {
		Findings []struct {
			Rule, Message string
			Object        struct{ Kind, Namespace, Name string }
		}
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	var b strings.Builder
	for _, f := range d.Findings {
		fmt.Fprintf(&b, "%s %s/%s/%s", f.Rule, f.Object.Kind, f.Object.Namespace, f.Object.Name)
		if messages {
			b.WriteString(": " + f.Message)
		}
		b.WriteString("\n")
	}
	return b.String()
}
