package bundle

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"

	corebundle "github.com/kubectl-ray/kubectl-ray/pkg/bundle"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmd/doctor"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/raytest"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/testio"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func loadObjects(t *testing.T, path string) (core, ray []runtime.Object) {
	t.Helper()
	sch := runtime.NewScheme()
	if err := scheme.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	if err := rayv1.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	dec := serializer.NewCodecFactory(sch).UniversalDeserializer()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		obj, gvk, err := dec.Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if gvk.Group == rayv1.GroupVersion.Group {
			ray = append(ray, obj)
		} else {
			core = append(core, obj)
		}
	}
	return core, ray
}

// kubelet plays the kubelet's part of the log reads: each container's log echoes secrets of
// the scene (as a Ray process that prints its command line would), and the operator's log names
// this cluster and another. It counts the reads, and refuses those listed in refuse.
type kubelet struct {
	*kube.Clients
	mu     sync.Mutex
	reads  []string
	refuse map[string]bool // pod/container
	// scene is the testdata file the clients hold (secrets.yaml when empty); logs, rayLogs and
	// dash replace what the containers print (by container name), Ray's log files and the
	// dashboard's answers, when given.
	scene   string
	logs    map[string]string
	rayLogs map[string]string
	dash    map[string]string
}

func (k *kubelet) PodLog(_ context.Context, ns, pod string, o *corev1.PodLogOptions) ([]byte, error) {
	k.mu.Lock()
	k.reads = append(k.reads, fmt.Sprintf("%s/%s/%s previous=%v", ns, pod, o.Container, o.Previous))
	k.mu.Unlock()
	if k.refuse[pod+"/"+o.Container] {
		return nil, kube.Explain(apierrors.NewForbidden(schema.GroupResource{Resource: "pods/log"}, pod, nil),
			kube.Request{Verb: "get", Resource: "pods/log", Namespace: ns, Name: pod})
	}
	if k.logs != nil {
		return []byte(k.logs[o.Container]), nil
	}
	if ns == "ray-system" {
		return []byte("reconciling RayCluster sec\nreconciling RayCluster other\nredis password plant-gcsft-pw-5 for sec\n"), nil
	}
	return []byte("ray start --redis-password=plant-redis-param-4 with API_TOKEN=plant-env-value-1\n" +
		"pip install --index-url https://u:plant-url-pw-8@pypi.internal/simple\n" +
		"runtime_env working_dir https://example.com/x.zip?access_token=plant-query-token-7\n" +
		"secret ref plant-secret-ref-name-2 mounted from plant-volume-10\n"), nil
}

// dashboard is the head's Ray dashboard as the port-forwards reach it: a Serve application that
// failed with a message echoing the pip index's password, and a job whose entrypoint and
// runtime_env echo the scene's secrets, plus one only Ray knows (dashOnlySecret), which only the
// structural pass over the answer can find.
func dashboard() map[string]string {
	bodies := map[string]string{}
	for k, v := range raytest.Quiet {
		bodies[k] = v
	}
	bodies["/api/version"] = `{"version":"4","ray_version":"2.9.0","ray_commit":"x"}`
	bodies["/api/serve/applications/"] = `{"applications":{"fruit_app":{"name":"fruit_app","status":"DEPLOY_FAILED",` +
		`"message":"pip install --index-url https://u:plant-url-pw-8@pypi.internal/simple failed","deployments":{}}}}`
	bodies["/api/jobs/"] = `[{"type":"SUBMISSION","job_id":"01000000","submission_id":"raysubmit_1","status":"SUCCEEDED",` +
		`"entrypoint":"python run.py --redis-password=plant-redis-param-4",` +
		`"runtime_env":{"env_vars":{"API_TOKEN":"plant-env-value-1","HF_TOKEN":"` + dashOnlySecret + `"}}}]`
	return bodies
}

const dashOnlySecret = "dash-only-token-77"

// TarDir plays the exec of tar in a head: Ray's log directory, whose files echo the same
// secrets (a GCS that logs its flags, a job's pip install).
func (k *kubelet) TarDir(_ context.Context, ns, pod, container, dir string, _ int64) ([]byte, bool, error) {
	k.mu.Lock()
	k.reads = append(k.reads, fmt.Sprintf("exec %s/%s/%s tar %s", ns, pod, container, dir))
	k.mu.Unlock()
	if k.refuse[pod+"/exec"] {
		return nil, false, kube.Explain(apierrors.NewForbidden(schema.GroupResource{Resource: "pods/exec"}, pod, nil),
			kube.Request{Verb: "create", Resource: "pods/exec", Namespace: ns, Name: pod})
	}
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	files := map[string]string{
		"gcs_server.out":             "GCS started with --redis_password=plant-redis-param-4\n",
		"job-driver-raysubmit_1.log": "pip install --index-url https://u:plant-url-pw-8@pypi.internal/simple\nAPI_TOKEN=plant-env-value-1\n",
	}
	if k.rayLogs != nil {
		files = k.rayLogs
	}
	for name, body := range files {
		tw.WriteHeader(&tar.Header{Name: "./" + name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))})
		tw.Write([]byte(body))
	}
	tw.Close()
	return b.Bytes(), false, nil
}

type result struct {
	stdout, stderr string
	code           int
}

func run(t *testing.T, k *kubelet, setup func(*kfake.Clientset), args ...string) result {
	t.Helper()
	return runCmd(t, k, setup, append([]string{"bundle"}, args...)...)
}

// runCmd runs `kubectl-ray args...` (bundle or doctor) over fake clients holding the scene.
func runCmd(t *testing.T, k *kubelet, setup func(*kfake.Clientset), args ...string) result {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	scene := k.scene
	if scene == "" {
		scene = "secrets.yaml"
	}
	core, ray := loadObjects(t, filepath.Join("testdata", scene))
	kc, rc := kfake.NewClientset(core...), rayfake.NewSimpleClientset(ray...)
	if setup != nil {
		setup(kc)
	}
	c := &kube.Clients{Kube: kc, Ray: rc}
	dash := k.dash
	if dash == nil {
		dash = dashboard()
	}
	c.Tunnels, _ = raytest.Dashboard(t, dash)
	k.Clients = c
	old := sourceOf
	sourceOf = func(*kube.Clients) corebundle.Source { return k }
	defer func() { sourceOf = old }()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	f := cmdutil.NewFactory(genericclioptions.NewConfigFlags(true), streams)
	f.Now = func() time.Time { return now }
	f.NewClients = func(*genericclioptions.ConfigFlags) (*kube.Clients, error) { return c, nil }
	root := &cobra.Command{Use: "kubectl-ray", SilenceErrors: true, SilenceUsage: true}
	f.ConfigFlags.AddFlags(root.PersistentFlags())
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return exit.Usagef("%v", err) })
	root.AddCommand(NewCmd(f, nil), doctor.NewCmd(f, nil))
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(errOut)
	err := root.ExecuteContext(context.Background())
	code := exit.CodeOf(err)
	if err != nil {
		errOut.WriteString("error: " + exit.Message(err) + "\n")
	}
	return result{out.String(), errOut.String(), code}
}

// planted are the secrets of testdata/secrets.yaml, one for each place a secret can hide.
var planted = regexp.MustCompile(`plant-[a-z-]+-[0-9]+`)

func plantedSecrets(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "secrets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var out []string
	for _, s := range planted.FindAllString(string(data), -1) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	if len(out) != 15 {
		t.Fatalf("the scene plants %d secrets (%v), want 15", len(out), out)
	}
	return out
}

func TestBundleRedactsEverySecret(t *testing.T) {
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	k := &kubelet{}
	var kc *kfake.Clientset
	res := run(t, k, func(c *kfake.Clientset) { kc = c }, "-n", "ml", "sec", "-o", out)
	if res.code != 0 || !strings.Contains(res.stdout, "wrote "+out) {
		t.Fatalf("want exit 0 and the archive written: %+v", res)
	}
	// Reads are LISTs, never a GET per object (the logs went through the kubelet above): doctor's
	// snapshot, then one LIST more of each kind the bundle adds, and one of the operator's pods.
	lists := map[string]int{}
	for _, a := range kc.Actions() {
		if r := a.GetResource().Resource; a.GetVerb() == "get" && (r == "version" || r == "group") {
			continue // discovery: the versions
		}
		if a.GetVerb() != "list" {
			t.Errorf("unexpected %s %s", a.GetVerb(), a.GetResource().Resource)
		}
		lists[a.GetResource().Resource]++
	}
	for r, n := range map[string]int{"pods": 3, "services": 2, "endpointslices": 2, "jobs": 2, "poddisruptionbudgets": 1, "networkpolicies": 1, "events": 3, "nodes": 1, "deployments": 1} {
		if lists[r] != n {
			t.Errorf("%d LISTs of %s, want %d (all: %v)", lists[r], r, n, lists)
		}
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	files, order := testio.Untar(t, out)
	var all bytes.Buffer
	for _, name := range order {
		all.WriteString(name)
		all.Write(files[name])
	}
	for _, s := range append(plantedSecrets(t), dashOnlySecret) {
		// The compressed bytes too: nothing is stored uncompressed beside the archive's entries.
		if bytes.Contains(all.Bytes(), []byte(s)) || bytes.Contains(raw, []byte(s)) {
			for _, name := range order {
				if bytes.Contains(files[name], []byte(s)) {
					t.Errorf("%s holds the planted secret %s:\n%s", name, s, files[name])
				}
			}
		}
	}
	if order[0] != "b/index.md" {
		t.Errorf("the archive starts with %s, want the index", order[0])
	}
	for _, want := range []string{
		"b/doctor.txt", "b/doctor.json", "b/versions.yaml",
		"b/namespaces/ml/rayclusters/sec.json", "b/namespaces/ml/rayjobs/job.json",
		"b/namespaces/ml/pods/sec-head-abcde.json", "b/namespaces/ml/pods/sec-worker-cpu-xyz.json",
		"b/namespaces/ml/services/sec-head-svc.json", "b/namespaces/ml/endpointslices/sec-head-svc-1.json",
		"b/namespaces/ml/jobs/job.json", "b/namespaces/ml/poddisruptionbudgets/sec-head.json", "b/namespaces/ml/networkpolicies/sec-workers.json",
		"b/namespaces/ml/events.json", "b/namespaces/ml/events.txt", "b/nodes/node-1.json",
		"b/operator/ray-system/deployment-kuberay-operator.json", "b/operator/ray-system/kuberay-operator-1/kuberay-operator.log",
		"b/logs/ml/sec-head-abcde/ray-head.log", "b/logs/ml/sec-head-abcde/ray-head.previous.log",
		"b/logs/ml/sec-head-abcde/wait-gcs.log", "b/logs/ml/sec-head-abcde/autoscaler.log",
		"b/ray-logs/ml/sec-head-abcde/gcs_server.out", "b/ray-logs/ml/sec-head-abcde/job-driver-raysubmit_1.log",
		"b/ray/ml/sec/dashboard.yaml", "b/ray/ml/sec/gcs_healthz.txt", "b/ray/ml/sec/version.json", "b/ray/ml/sec/v0-nodes.json",
		"b/ray/ml/sec/serve-applications.json", "b/ray/ml/sec/jobs.json", "b/ray/ml/sec/cluster_status.json",
	} {
		if _, ok := files[want]; !ok {
			t.Errorf("no %s in the archive (%v)", want, order)
		}
	}
	// Not this bundle's: the other cluster, its pod, Service, node and Events; a PDB of other pods.
	for name, data := range files {
		if strings.Contains(name, "other") || strings.Contains(name, "node-2") || strings.Contains(name, "pdb-web") || strings.HasSuffix(name, "/web.json") {
			t.Errorf("%s is not about the bundled cluster", name)
		}
		if strings.HasSuffix(name, "events.txt") && strings.Contains(string(data), "another cluster") {
			t.Errorf("events.txt holds an Event about another cluster:\n%s", data)
		}
	}
	if op := string(files["b/operator/ray-system/kuberay-operator-1/kuberay-operator.log"]); !strings.Contains(op, "RayCluster sec") || strings.Contains(op, "other") {
		t.Errorf("the operator's log is not cut to the lines naming sec:\n%s", op)
	}
	if node := string(files["b/nodes/node-1.json"]); !strings.Contains(node, "allocatable") || strings.Contains(node, "images") {
		t.Errorf("the node keeps conditions, taints and allocatable, not its images:\n%s", node)
	}
	// One read per container asked for: the head's three (ray-head current and previous), the
	// init container and the sidecar; the worker never started; and the operator's container.
	// One exec of tar in the running head's Ray container.
	sort.Strings(k.reads)
	want := []string{
		"exec ml/sec-head-abcde/ray-head tar /tmp/ray/session_latest/logs",
		"ml/sec-head-abcde/autoscaler previous=false", "ml/sec-head-abcde/ray-head previous=false",
		"ml/sec-head-abcde/ray-head previous=true", "ml/sec-head-abcde/wait-gcs previous=false",
		"ray-system/kuberay-operator-1/kuberay-operator previous=false",
	}
	if strings.Join(k.reads, "\n") != strings.Join(want, "\n") {
		t.Errorf("log reads:\n%s\nwant:\n%s", strings.Join(k.reads, "\n"), strings.Join(want, "\n"))
	}
	index := string(files["b/index.md"])
	if !strings.Contains(index, "Nothing: every read succeeded") || !strings.Contains(index, "| logs/ml/sec-head-abcde/ray-head.previous.log |") {
		t.Errorf("index:\n%s", index)
	}
}

// A read that fails is listed in the index with the verb and resource refused; the bundle is
// still written.
func TestBundleListsWhatItCouldNotRead(t *testing.T) {
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	k := &kubelet{refuse: map[string]bool{"sec-head-abcde/ray-head": true, "sec-head-abcde/exec": true}}
	res := run(t, k, func(kc *kfake.Clientset) {
		kc.PrependReactor("list", "poddisruptionbudgets", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, "", nil)
		})
	}, "-n", "ml", "-o", out)
	if res.code != 0 || !strings.Contains(res.stdout, "4 reads failed") {
		t.Fatalf("want exit 0 and four failed reads: %+v", res)
	}
	files, _ := testio.Untar(t, out)
	index := string(files["b/index.md"])
	for _, want := range []string{
		`read the log of ml/sec-head-abcde container ray-head: forbidden: you cannot get pods/log in namespace "ml"; ask for RBAC verb "get" on "pods/log"`,
		`read the log of ml/sec-head-abcde container ray-head (previous): forbidden`,
		`doctor's snapshot: poddisruptionbudgets: forbidden: you cannot list poddisruptionbudgets.policy in namespace "ml"; ask for RBAC verb "list"`,
		`read Ray's log files of ml/sec-head-abcde (tar of /tmp/ray/session_latest/logs in container ray-head): forbidden: you cannot create pods/exec in namespace "ml"; ask for RBAC verb "create" on "pods/exec"`,
	} {
		if !strings.Contains(index, want) {
			t.Errorf("index lacks %q:\n%s", want, index)
		}
	}
	if _, ok := files["b/logs/ml/sec-head-abcde/wait-gcs.log"]; !ok {
		t.Errorf("the other logs were not read after one was refused")
	}
}

// --no-ray-logs: no exec; the container logs are still read; the index says so.
func TestBundleNoRayLogs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	k := &kubelet{}
	if res := run(t, k, nil, "-n", "ml", "--no-ray-logs", "-o", out); res.code != 0 {
		t.Fatalf("%+v", res)
	}
	files, _ := testio.Untar(t, out)
	for name := range files {
		if strings.Contains(name, "/ray-logs/") {
			t.Errorf("--no-ray-logs wrote %s", name)
		}
	}
	for _, r := range k.reads {
		if strings.HasPrefix(r, "exec ") {
			t.Errorf("--no-ray-logs made an exec: %s", r)
		}
	}
	if _, ok := files["b/logs/ml/sec-head-abcde/ray-head.log"]; !ok || !strings.Contains(string(files["b/index.md"]), "Ray's log files were left out (--no-ray-logs)") {
		t.Errorf("index:\n%s", files["b/index.md"])
	}
	if res := run(t, k, nil, "-n", "ml", "--ray-log-bytes", "-1", "-o", out+"2"); res.code != 2 || !strings.Contains(res.stderr, "--ray-log-bytes") {
		t.Errorf("--ray-log-bytes -1: %+v", res)
	}
}

func TestBundleNoLogs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	k := &kubelet{}
	res := run(t, k, nil, "-n", "ml", "--no-logs", "-o", out)
	if res.code != 0 {
		t.Fatalf("%+v", res)
	}
	files, _ := testio.Untar(t, out)
	for name := range files {
		if strings.HasSuffix(name, ".log") {
			t.Errorf("--no-logs wrote %s", name)
		}
	}
	if len(k.reads) != 0 {
		t.Errorf("--no-logs read logs: %v", k.reads)
	}
	if !strings.Contains(string(files["b/index.md"]), "Container logs were left out (--no-logs)") {
		t.Errorf("the index does not say logs were left out:\n%s", files["b/index.md"])
	}
}

func TestBundleRefusals(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.tar.gz")
	if err := os.WriteFile(existing, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-n", "ml", "-o", existing}, exit.Usage, "error: " + existing + " exists; pick another --output, or pass --force to overwrite it\n"},
		{[]string{"-n", "ml", "nope", "-o", filepath.Join(dir, "n.tar.gz")}, exit.NotFound, `error: RayCluster, RayService or RayJob "nope" not found`},
		{[]string{"-n", "ml"}, exit.Usage, "error: say where to write the bundle: --output FILE.tar.gz\n"},
		{[]string{"-n", "ml", "-o", filepath.Join(dir, "no", "such", "b.tar.gz")}, exit.Usage, "does not exist; create it or pick another --output"},
		{[]string{"-A", "sec", "-o", filepath.Join(dir, "a.tar.gz")}, exit.Usage, "pass -n NAMESPACE instead of -A"},
	} {
		res := run(t, &kubelet{}, nil, c.args...)
		if res.code != c.code || !strings.Contains(res.stderr, c.msg) || strings.Count(res.stderr, "\n") != 1 {
			t.Errorf("%v: want exit %d and one line %q, got %+v", c.args, c.code, c.msg, res)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Errorf("the existing file was changed: %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left behind: %v", entries)
	}
	// --force replaces it.
	if res := run(t, &kubelet{}, nil, "-n", "ml", "--no-logs", "-o", existing, "--force"); res.code != 0 {
		t.Errorf("--force: %+v", res)
	}
	if files, _ := testio.Untar(t, existing); files["old/index.md"] == nil {
		t.Errorf("--force did not replace the file")
	}
}

// doctor --from a bundle gives the findings doctor gave live when the bundle was made, and those
// in the bundle's own doctor.json: the same rules on the same snapshot, rebuilt from the archive.
func TestDoctorFromBundleEqualsLive(t *testing.T) {
	for _, target := range [][]string{nil, {"sec"}} {
		out := filepath.Join(t.TempDir(), "b.tar.gz")
		args := append([]string{"-n", "ml", "-o", out}, target...)
		if res := run(t, &kubelet{}, nil, args...); res.code != 0 {
			t.Fatalf("bundle: %+v", res)
		}
		// Live, at the moment the bundle was made (the clock is pinned), from the same dashboard:
		// as the bundle, doctor asks Ray about a named cluster only.
		live := runCmd(t, &kubelet{}, nil, append([]string{"doctor", "-n", "ml", "-o", "json", "--fail-on", "never"}, target...)...)
		from := runCmd(t, &kubelet{}, nil, "doctor", "--from", out, "-o", "json", "--fail-on", "never")
		if live.code != 0 || from.code != 0 {
			t.Fatalf("%v: live %+v\nfrom %+v", target, live, from)
		}
		files, _ := testio.Untar(t, out)
		got, want, kept := findings(t, from.stdout), findings(t, live.stdout), findings(t, string(files["b/doctor.json"]))
		if got != want || got != kept {
			t.Errorf("%v: doctor --from found\n%s\nlive\n%s\nthe bundle's doctor.json\n%s", target, got, want, kept)
		}
		if !strings.Contains(got, "operator-outdated") {
			t.Errorf("%v: the scene should fire operator-outdated at least:\n%s", target, got)
		}
		// Ray's view, replayed from the answers the bundle kept: the failed Serve app, in Ray's
		// words (redacted); a sweep asks no dashboard, as doctor's does not.
		if ray := strings.Contains(got, "serve-app-failed"); ray != (target != nil) || target != nil && !strings.Contains(got, "pip install --index-url https://u:[redacted]@") {
			t.Errorf("%v: Ray's view in doctor --from:\n%s", target, got)
		}
	}
}

// A bundle written before objects were JSON (testdata/yaml-bundle.tar.gz: this scene's bundle as
// the release before wrote it, its objects NAME.yaml) is read as it was: doctor --from finds
// in it what it finds in the scene's bundle written now, and what doctor found live.
func TestDoctorFromReadsYAMLBundles(t *testing.T) {
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	if res := run(t, &kubelet{}, nil, "-n", "ml", "-o", out); res.code != 0 {
		t.Fatalf("bundle: %+v", res)
	}
	files, _ := testio.Untar(t, out)
	if files["b/namespaces/ml/pods/sec-head-abcde.json"] == nil {
		t.Fatalf("the bundle written now has no pod as JSON")
	}
	now := runCmd(t, &kubelet{}, nil, "doctor", "--from", out, "-o", "json", "--fail-on", "never")
	old := runCmd(t, &kubelet{}, nil, "doctor", "--from", filepath.Join("testdata", "yaml-bundle.tar.gz"), "-o", "json", "--fail-on", "never")
	live := runCmd(t, &kubelet{}, nil, "doctor", "-n", "ml", "-o", "json", "--fail-on", "never")
	if now.code != 0 || old.code != 0 || live.code != 0 {
		t.Fatalf("now %+v\nold %+v\nlive %+v", now, old, live)
	}
	got, want, live2 := findings(t, old.stdout), findings(t, now.stdout), findings(t, live.stdout)
	if got != want || got != live2 || !strings.Contains(got, "operator-outdated") {
		t.Errorf("doctor --from the YAML bundle found\n%s\nfrom the JSON one\n%s\nlive\n%s", got, want, live2)
	}
}

// findings is the rule, object and message of each finding of a doctor -o json document, one a line.
func findings(t *testing.T, doc string) string {
	t.Helper()
	var d struct {
		Findings []struct {
			Rule, Message string
			Object        struct{ Kind, Namespace, Name string }
		}
		Summary map[string]any
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	var b strings.Builder
	for _, f := range d.Findings {
		fmt.Fprintf(&b, "%s %s/%s/%s: %s\n", f.Rule, f.Object.Kind, f.Object.Namespace, f.Object.Name, f.Message)
	}
	fmt.Fprintf(&b, "summary %v\n", d.Summary)
	return b.String()
}

func TestDoctorFromRefusals(t *testing.T) {
	dir := t.TempDir()
	notGzip := filepath.Join(dir, "x.tar.gz")
	if err := os.WriteFile(notGzip, []byte("not a bundle"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--from", filepath.Join(dir, "none.tar.gz")}, "cannot read the bundle " + filepath.Join(dir, "none.tar.gz") + ": no such file or directory"},
		{[]string{"--from", notGzip}, notGzip + " is not a bundle kubectl ray bundle wrote: gzip"},
		{[]string{"--from", notGzip, "-A"}, "-A and -l do not apply"},
		{[]string{"--from", notGzip, "-f", notGzip}, "--from checks a bundle, -f manifests: pick one"},
		{[]string{"--from", notGzip, "--watch"}, "drop --watch"},
		{[]string{"--from", notGzip, "--ray"}, "drop --ray"},
	} {
		res := runCmd(t, &kubelet{}, nil, append([]string{"doctor"}, c.args...)...)
		if res.code != exit.Usage || !strings.Contains(res.stderr, c.msg) || strings.Count(res.stderr, "\n") != 1 {
			t.Errorf("%v: want exit 2 and one line %q, got %+v", c.args, c.msg, res)
		}
	}
}

// Ray's dashboard is asked as doctor asks it: a named cluster by default, every cluster with
// --ray, none with --ray=false; what it answered is under ray/NS/CLUSTER/.
func TestBundleAsksRayAsDoctorDoes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"sec"}, true},
		{[]string{"sec", "--ray=false"}, false},
		{nil, false},
		{[]string{"--ray"}, true},
	} {
		out := filepath.Join(t.TempDir(), "b.tar.gz")
		if res := run(t, &kubelet{}, nil, append([]string{"-n", "ml", "-o", out}, tc.args...)...); res.code != 0 {
			t.Fatalf("%v: %+v", tc.args, res)
		}
		files, _ := testio.Untar(t, out)
		index, ok := files["b/ray/ml/sec/dashboard.yaml"]
		if ok != tc.want {
			t.Errorf("bundle %v: ray/ml/sec/dashboard.yaml there: %v, want %v", tc.args, ok, tc.want)
		}
		if ok && (!strings.Contains(string(index), "head: sec-head-abcde") || !strings.Contains(string(index), "file: serve-applications.json")) {
			t.Errorf("bundle %v: dashboard.yaml:\n%s", tc.args, index)
		}
	}
}
