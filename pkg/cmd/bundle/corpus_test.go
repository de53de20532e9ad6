package bundle

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/pkg/evidence"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/raytest"
	"github.com/kubectl-ray/kubectl-ray/pkg/internal/testio"
	"github.com/kubectl-ray/kubectl-ray/pkg/repair"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// The corpus's free text: what the containers print, Ray's log files and the dashboard's answers,
// each planting values that only their shape shows (no spec holds them).
var (
	ghToken = "ghp_" + "Zx9Lq2Vb7Nw4Rt6Ym1Kc8Hd3Jf5Gs0Pa2Ue7" // gitleaks' github-pat
	pemBody = "MIIEowIBAAKCAQEAcpsLogPem27x" + "Q8vN2m"
	logs    = map[string]string{
		"ray-head": "2025-06-01 INFO login with Bearer cps-log-bearer-25abcdef\n" +
			`{"user": "ray", "password": "cps-log-json-26"}` + "\n" +
			"pushing results with " + ghToken + "\n" +
			"-----BEGIN RSA PRIVATE KEY-----\n" + pemBody + "\n-----END RSA PRIVATE KEY-----\n" +
			"node 7f3a9c0e1b2d4f6a8c0e1b2d4f6a8c0e1b2d4f6a8c0e1b2d4f6a8c0e is ALIVE\n" +
			"Missing authentication token\n",
		"ray-worker":       "worker started\n",
		"probe":            "ok\n",
		"kuberay-operator": "reconciling RayCluster sec\nRayCluster sec: dashboard call with Authorization: Basic cps-oplog-basic-29\n",
	}
	rayLogs = map[string]string{
		// Ray's GCS logs its command line; the password came from a secretKeyRef, so no spec
		// reveals it.
		"gcs_server.out": "GCS started with --redis_password=cps-raylog-gcs-30 --gcs_server_port=6379\n",
	}
)

func corpusDashboard() map[string]string {
	d := map[string]string{}
	for k, v := range raytest.Quiet {
		d[k] = v
	}
	d["/api/version"] = `{"version":"4","ray_version":"2.52.0","ray_commit":"x"}`
	d["/api/jobs/"] = `[{"type":"SUBMISSION","job_id":"01000000","submission_id":"raysubmit_1","status":"FAILED",` +
		`"entrypoint":"python x.py --token cps-dash-entry-32","message":"Job failed",` +
		`"runtime_env":{"env_vars":{"WANDB_API_KEY":"cps-dash-env-31"}}}]`
	return d
}

// corpusPlanted are the values the corpus plants, from the scene and the free text above.
func corpusPlanted(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "corpus.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`cps-[a-z-]+-[0-9]+[a-z]*`)
	seen := map[string]bool{}
	for _, s := range re.FindAllString(string(data)+logs["ray-head"]+logs["kuberay-operator"]+rayLogs["gcs_server.out"]+corpusDashboard()["/api/jobs/"], -1) {
		seen[s] = true
	}
	seen[ghToken], seen[pemBody] = true, true
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	if len(out) != 32 {
		t.Fatalf("the corpus plants %d values, want 32: %v", len(out), out)
	}
	return out
}

// survivors are what a reader needs and no redactor may blank out.
var survivors = []string{
	"rayproject/ray:2.52.0", "sec-head-abcde", "500m", "2Gi", "Created container ray-head",
	"7f3a9c0e1b2d4f6a8c0e1b2d4f6a8c0e1b2d4f6a8c0e1b2d4f6a8c0e", "Missing authentication token",
	"RAY_AUTH_MODE", "--redis-password", "--redis_password", "quay.io/kuberay/operator:v1.6.0",
}

func corpusKubelet() *kubelet {
	return &kubelet{scene: "corpus.yaml", logs: logs, rayLogs: rayLogs, dash: corpusDashboard()}
}

// Every writer, every format: the bundle's archive, doctor's outputs, heal's evidence (its
// directory) and the watchdog's log lines of that evidence.
func TestCorpusNoPlantedValueSurvives(t *testing.T) {
	written := map[string][]byte{}

	out := filepath.Join(t.TempDir(), "b.tar.gz")
	k := corpusKubelet()
	if res := run(t, k, nil, "-n", "ml", "-o", out); res.code != 0 {
		t.Fatalf("bundle: %+v", res)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	written["the archive's compressed bytes"] = raw
	files, _ := testio.Untar(t, out)
	for name, data := range files {
		written[name] = data
	}
	index := string(files["b/index.md"])
	if !strings.Contains(index, "namespaces/ml/rayservices/broken.json: field spec.serveConfigV2 redacted whole") {
		t.Errorf("the index does not say the malformed serveConfigV2 was redacted whole:\n%s", index)
	}
	if svc := string(files["b/namespaces/ml/rayservices/svc.json"]); !strings.Contains(svc, "import_path: veg.app") {
		t.Errorf("the parsed serveConfigV2 lost what a reader needs:\n%s", svc)
	}

	for _, args := range [][]string{
		{"doctor", "-n", "ml", "--ray"}, {"doctor", "-n", "ml", "--ray", "-o", "json"},
		{"doctor", "-n", "ml", "--ray", "-o", "yaml"}, {"doctor", "-n", "ml", "--ray", "-o", "junit"},
		{"doctor", "-n", "ml", "sec", "-o", "wide"},
	} {
		res := runCmd(t, corpusKubelet(), nil, args...)
		if res.code > 2 || res.stdout == "" {
			t.Errorf("%v: %+v", args, res)
		}
		written[strings.Join(args, " ")] = []byte(res.stdout + res.stderr)
	}

	// heal's evidence of the head, as one-shot heal keeps it and the watchdog logs it.
	k = corpusKubelet()
	runCmd(t, k, nil, "doctor", "-n", "ml") // sets k.Clients over the scene
	head, err := k.Kube.CoreV1().Pods("ml").Get(context.Background(), "sec-head-abcde", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev := evidence.Taker{Src: k}.Take(context.Background(), evidence.Subject{Pod: head, Cluster: state.Ref{Namespace: "ml", Name: "sec"},
		Rule: "head-crashloop", Why: head.Status.Message}, nil)
	dir, err := evidence.WriteDir(t.TempDir(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			written["evidence "+p], _ = os.ReadFile(p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "logfmt"} {
		var b bytes.Buffer
		log := repair.NewLogger(&b, format, nil)
		for _, l := range ev.LogLines() {
			log.Line("info", l.Msg, l.KV...)
		}
		written["watchdog log "+format] = b.Bytes()
	}

	for _, v := range corpusPlanted(t) {
		for where, data := range written {
			if bytes.Contains(data, []byte(v)) {
				t.Errorf("%s holds the planted %s", where, v)
			}
		}
	}
	var all bytes.Buffer
	for _, data := range written {
		all.Write(data)
	}
	for _, s := range survivors {
		if !bytes.Contains(all.Bytes(), []byte(s)) {
			t.Errorf("%q was redacted away: a reader needs it", s)
		}
	}
	if pod := string(files["b/namespaces/ml/pods/sec-head-abcde.json"]); !strings.Contains(pod, `"value": "token"`) {
		t.Errorf("RAY_AUTH_MODE's value (token) is a mode, not a secret:\n%s", pod)
	}
	if log := string(files["b/logs/ml/sec-head-abcde/ray-head.log"]); !strings.Contains(log, "Missing authentication token") {
		t.Errorf("the word token was redacted from a log line:\n%s", log)
	}
}
