package redact

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Random values planted in random secret places of valid KubeRay objects, each spelled in a
// random one of the ways users write it, must be found nowhere in what the object renders to
// (by structure, then through the redactor that knows what the typed layer collected, as doctor
// and the bundle write), nor in a message that quotes the value bare.
func TestPropertyPlantedValuesNeverSurvive(t *testing.T) {
	seed := rand.Int63()
	rng := rand.New(rand.NewSource(seed))
	for i := 0; i < 400; i++ {
		value := randomValue(rng)
		place, plant := places[rng.Intn(len(places))](rng, value)
		svc := sampleService()
		plant(svc)
		raw, err := json.Marshal(svc)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		found := Set{}
		Object(m, found)
		typed := Set{}
		typed.AddRayServiceSpec(&svc.Spec)
		r := New(found, typed)
		out, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		text := r.String(string(out)) + "\n" + r.String("the head said: "+value+" was refused")
		if strings.Contains(text, value) {
			t.Fatalf("seed %d, case %d: %s planted %q, and it survives:\n%s", seed, i, place, value, text)
		}
	}
}

func randomValue(rng *rand.Rand) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 10+rng.Intn(20))
	for i := range b {
		b[i] = chars[rng.Intn(len(chars))]
	}
	return string(b)
}

func pick(rng *rand.Rand, s ...string) string { return s[rng.Intn(len(s))] }

func secretName(rng *rand.Rand) string {
	return pick(rng, "REDIS", "DB", "OPENAI", "HF", "WANDB", "S3", "APP", "SERVICE") +
		pick(rng, "_PASSWORD", "_TOKEN", "_API_KEY", "_SECRET", "_PWD", "_DSN", "_ACCESS_KEY", "_KEY", "_CREDENTIALS")
}

func secretFlag(rng *rand.Rand) string {
	return pick(rng, "--redis_password", "--redis-password", "--password", "--requirepass", "--token", "--api-key", "--access-key", "--secret")
}

type planter func(rng *rand.Rand, v string) (string, func(*rayv1.RayService))

func head(s *rayv1.RayService) *corev1.Container {
	return &s.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0]
}

var places = []planter{
	func(rng *rand.Rand, v string) (string, func(*rayv1.RayService)) {
		n := secretName(rng)
		return "env " + n, func(s *rayv1.RayService) { head(s).Env = append(head(s).Env, corev1.EnvVar{Name: n, Value: v}) }
	},
	func(rng *rand.Rand, v string) (string, func(*rayv1.RayService)) {
		f := secretFlag(rng)
		var args []string
		switch rng.Intn(4) {
		case 0:
			args = []string{f, v}
		case 1:
			args = []string{f + "=" + v}
		case 2:
			args = []string{"ray start --head " + f + "=" + fmt.Sprintf("%q", v) + " --block"}
		default:
			args = []string{"-c", "ulimit -n 65536; ray start --head " + f + " '" + v + "' && sleep infinity"}
		}
		return "args " + strings.Join(args, " "), func(s *rayv1.RayService) {
			head(s).Command = []string{"/bin/bash"}
			head(s).Args = args
		}
	},
	func(rng *rand.Rand, v string) (string, func(*rayv1.RayService)) {
		n := secretName(rng)
		var doc string
		switch rng.Intn(3) {
		case 0:
			doc = "applications:\n- name: a\n  import_path: m:app\n  runtime_env:\n    env_vars:\n      " + n + ": " + v + "\n"
		case 1:
			doc = "applications: [{name: a, import_path: m:app, runtime_env: {env_vars: {" + n + ": " + v + "}}}]\n"
		default:
			doc = `{"applications": [{"name": "a", "runtime_env": {"env_vars": {"` + n + `": "` + v + `"}}}]}`
		}
		return "serveConfigV2 " + doc, func(s *rayv1.RayService) { s.Spec.ServeConfigV2 = doc }
	},
	func(rng *rand.Rand, v string) (string, func(*rayv1.RayService)) {
		u := pick(rng, "https://ci:"+v+"@pypi.internal/simple", "redis://:"+v+"@redis:6379", "https://x.example/w.zip?access_token="+v)
		return "URL " + u, func(s *rayv1.RayService) {
			s.Spec.ServeConfigV2 = "applications:\n- name: a\n  runtime_env:\n    pip: [\"--index-url\", \"" + u + "\"]\n    working_dir: \"" + u + "\"\n"
		}
	},
	func(rng *rand.Rand, v string) (string, func(*rayv1.RayService)) {
		k := pick(rng, "redis-password", "redis_password", "token")
		return "rayStartParams " + k, func(s *rayv1.RayService) { s.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams[k] = v }
	},
	func(rng *rand.Rand, v string) (string, func(*rayv1.RayService)) {
		h := pick(rng, "Authorization: Bearer ", "x-ray-authorization: Bearer ", "Authorization: Basic ")
		return "header " + h, func(s *rayv1.RayService) {
			head(s).Command = []string{"sh", "-c", "curl -sf -H '" + h + v + "' http://localhost:8265/api/version"}
		}
	},
}

func sampleService() *rayv1.RayService {
	return &rayv1.RayService{
		Spec: rayv1.RayServiceSpec{
			RayClusterSpec: rayv1.RayClusterSpec{
				HeadGroupSpec: rayv1.HeadGroupSpec{
					RayStartParams: map[string]string{"dashboard-host": "0.0.0.0"},
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
						Name: "ray-head", Image: "rayproject/ray:2.52.0",
						Env: []corev1.EnvVar{{Name: "RAY_AUTH_MODE", Value: "token"}},
					}}}},
				},
			},
		},
	}
}
