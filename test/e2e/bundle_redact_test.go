package e2e

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectl ray bundle and doctor through the real binary, on the shared KubeRay v1.1.1 sandbox,
// with credentials written the ways users write them (each value planted once, none a literal
// the value layer knew from elsewhere): a container's args as a list with the flag and its value
// in two elements, Ray's --redis_password in a bash -lc line, an Authorization header in a
// probe's command, env names ending _KEY/_PWD/_DSN, an Azure connection string; a RayJob whose
// entrypoint has --api-key= and whose runtimeEnvYAML writes env_vars inline (the real operator
// copies both into its submitter Job's command); a RayService whose serveConfigV2 sets runtime_env
// env_vars, and one whose serveConfigV2 is not YAML (redacted whole, said in the index). No
// planted value is in any byte of the archive or of doctor's outputs; RAY_AUTH_MODE's value,
// token, stays readable. About 20 s.
func TestBundleRedactsWhatUsersWrite(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	planted := map[string]string{
		"args split":      "e2e-args-split-Qx71",
		"args token":      "e2e-args-token-Rb82",
		"bash -lc":        "e2e-bash-underscore-Mn93",
		"Authorization":   "e2e-bearer-Kc04pq",
		"_KEY env":        "e2e-env-key-Hd15",
		"_PWD env":        "e2e-env-pwd-Jf26",
		"_DSN env":        "e2e-env-dsn-Lg37",
		"AccountKey=":     "e2e-conn-key-Pz48",
		"entrypoint":      "e2e-entry-apikey-Tw59",
		"runtimeEnvYAML":  "e2e-job-inline-Ys60",
		"serveConfigV2":   "e2e-serve-env-Uv71",
		"malformed serve": "e2e-serve-bad-Wx82",
	}
	h.CreateRayCluster("rdct", func(rc *rayv1.RayCluster) {
		c := &rc.Spec.HeadGroupSpec.Template.Spec.Containers[0]
		c.Command = []string{"ray", "start", "--head", "--redis-password"}
		c.Args = []string{planted["args split"], "--token", planted["args token"]}
		c.Env = append(c.Env,
			corev1.EnvVar{Name: "RAY_AUTH_MODE", Value: "token"},
			corev1.EnvVar{Name: "STORAGE_ACCOUNT_KEY", Value: planted["_KEY env"]},
			corev1.EnvVar{Name: "DB_PWD", Value: planted["_PWD env"]},
			corev1.EnvVar{Name: "ANALYTICS_DSN", Value: planted["_DSN env"]},
			corev1.EnvVar{Name: "AZURE_STORAGE_CONNECTION_STRING", Value: "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=" + planted["AccountKey="] + ";EndpointSuffix=core.windows.net"})
		w := &rc.Spec.WorkerGroupSpecs[0].Template.Spec
		w.Containers[0].Command = []string{"/bin/bash", "-lc", "ray start --address=rdct-head-svc:6379 --redis_password=" + planted["bash -lc"] + " --block"}
		w.Containers = append(w.Containers, corev1.Container{Name: "probe", Image: "curlimages/curl:8.10.1",
			Command: []string{"sh", "-c", "curl -sf -H 'Authorization: Bearer " + planted["Authorization"] + "' http://localhost:8000/"}})
	})
	job := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "rdct-job", Namespace: h.NS}, Spec: rayv1.RayJobSpec{
		Entrypoint:      "python train.py --api-key=" + planted["entrypoint"] + " --epochs 3",
		RuntimeEnvYAML:  "env_vars: {API_TOKEN: " + planted["runtimeEnvYAML"] + "}\n",
		ClusterSelector: map[string]string{"ray.io/cluster": "rdct"},
	}}
	if _, err := h.Ray.RayV1().RayJobs(h.NS).Create(h.Ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, config := range map[string]string{
		"rdct-svc": "applications:\n  - name: app\n    import_path: fruit.app\n    runtime_env:\n      env_vars:\n        HF_TOKEN: " + planted["serveConfigV2"] + "\n",
		"rdct-bad": "applications:\n  - name: a\n    runtime_env: {env_vars: {HF_TOKEN: " + planted["malformed serve"] + "}\n   bad: [\n",
	} {
		rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.NS}, Spec: rayv1.RayServiceSpec{
			ServeConfigV2: config, RayClusterSpec: h.sampleCluster("x").Spec}}
		rs.Spec.RayClusterSpec.WorkerGroupSpecs = nil
		if _, err := h.Ray.RayV1().RayServices(h.NS).Create(h.Ctx, rs, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.WaitClusterRunning("rdct", 90*time.Second)
	// The real operator makes the RayJob's submitter Job, whose command repeats the entrypoint and
	// the runtime environment.
	h.WaitFor("the operator to create the RayJob's submitter Job", 60*time.Second, func() (bool, error) {
		_, err := h.Kube.BatchV1().Jobs(h.NS).Get(h.Ctx, "rdct-job", metav1.GetOptions{})
		return err == nil, nil
	})

	out := filepath.Join(t.TempDir(), "rdct.tar.gz")
	res := h.Run("bundle", "-o", out)
	if res.Code != 0 {
		t.Fatalf("bundle: %s", res)
	}
	files, order := untarBundle(t, out)
	written := map[string][]byte{}
	for _, name := range order {
		written[name] = files[name]
	}
	for _, args := range [][]string{{"doctor"}, {"doctor", "-o", "json"}, {"doctor", "-o", "yaml"}, {"doctor", "rdct", "-o", "wide"}} {
		r := h.Run(args...)
		written[strings.Join(args, " ")] = []byte(r.Stdout + r.Stderr)
	}
	for where, v := range planted {
		for name, data := range written {
			if bytes.Contains(data, []byte(v)) {
				t.Errorf("the value planted in %s is in %s", where, name)
			}
		}
	}
	ns := "rdct/namespaces/" + h.NS + "/"
	if job := string(files[ns+"jobs/rdct-job.json"]); !strings.Contains(job, "[redacted]") {
		t.Errorf("the submitter Job should be in the bundle with its command redacted:\n%s", job)
	}
	if rc := string(files[ns+"rayclusters/rdct.json"]); !strings.Contains(rc, `"value": "token"`) || !strings.Contains(rc, "--redis-password") {
		t.Errorf("RAY_AUTH_MODE's token and the flag names must stay readable:\n%s", rc)
	}
	if index := string(files["rdct/index.md"]); !strings.Contains(index, "rayservices/rdct-bad.json: field spec.serveConfigV2 redacted whole") {
		t.Errorf("the index does not say the malformed serveConfigV2 was redacted whole:\n%s", index)
	}
}
