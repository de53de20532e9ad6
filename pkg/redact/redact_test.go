package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"REDIS_PASSWORD": true, "redis-password": true, "redis_password": true, "requirepass": true, "API_TOKEN": true,
		"OPENAI_API_KEY": true, "AccountKey": true, "DATABASE_DSN": true, "DB_PWD": true, "HF_TOKEN": true,
		"api-key": true, "access-key": true, "X-Auth": true, "--token": true, "apikey": true, "AWS_SECRET_ACCESS_KEY": true,
		"RAY_AUTH_MODE": false, "TOKEN_TYPE": false, "key": false, "topologyKey": false, "serviceAccountName": false,
		"authority": false, "image": false, "RAY_ADDRESS": false, "num-cpus": false, "PASSWORD_FILE": false,
		"automountServiceAccountToken": false, "dashboard-host": false,
	} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestArgvSeesFlagAndValueTogether(t *testing.T) {
	for _, argv := range [][]string{
		{"redis-server", "--requirepass", "plant-a"},
		{"ray", "start", "--redis-password", "plant-a"},
		{"ray", "start", "--token", "plant-a"},
		{"ray", "start", "--redis_password=plant-a"},
		{"sh", "-c", "ray start --head --redis_password='plant-a' && sleep 1"},
		{"bash", "-lc", `API_KEY=plant-a python app.py`},
		{"bash", "-lc", `export DB_PASSWORD="plant-a"; python app.py`},
		{"curl", "-H", "Authorization: Bearer plant-a", "http://x"},
		{"python", "serve.py", "--api-key=plant-a"},
		{"ray", "job", "submit", "--runtime-env-json", `{"env_vars": {"HF_TOKEN": "plant-a"}}`, "--", "python", "x.py"},
		{"redis-cli", "-a", "plant-a", "ping"},
	} {
		set := Set{}
		set.AddArgv(argv)
		if _, ok := set["plant-a"]; !ok {
			t.Errorf("%q: the secret was not found (found %v)", argv, set)
		}
		red := strings.Join(RedactArgv(argv, Set{}), " ")
		if strings.Contains(red, "plant-a") || !strings.Contains(red, Redacted) {
			t.Errorf("%q redacted is %q", argv, red)
		}
		if argv[0] != "curl" && !strings.Contains(red, argv[0]) {
			t.Errorf("%q lost its command: %q", argv, red)
		}
	}
}

func TestEmbeddedDocumentsEveryForm(t *testing.T) {
	for _, doc := range []string{
		"env_vars:\n  API_TOKEN: plant-b\n",
		"env_vars: {API_TOKEN: plant-b}\n",
		`{"env_vars": {"API_TOKEN": "plant-b"}}`,
		"pip: [\"--index-url https://u:plant-b@pypi.example/simple\", torch]\n",
		"pip:\n  packages: [torch]\n  pip_install_options: [\"--extra-index-url\", \"https://u:plant-b@pypi.example/simple\"]\n",
		"working_dir: \"https://example.com/x.zip?access_token=plant-b\"\n",
		"applications:\n- name: app\n  import_path: m:app\n  runtime_env:\n    env_vars: {HF_TOKEN: plant-b}\n",
		"applications:\n- name: app\n  args:\n    api_key: plant-b\n",
	} {
		set := Set{}
		if err := set.AddEmbedded(doc); err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if _, ok := set["plant-b"]; !ok {
			t.Errorf("%q: not found (found %v)", doc, set)
		}
		red, err := RedactEmbedded(doc, Set{})
		if err != nil || strings.Contains(red, "plant-b") || !strings.Contains(red, Redacted) {
			t.Errorf("%q redacted is %q (%v)", doc, red, err)
		}
	}
	if red, err := RedactEmbedded("applications:\n  - name: a\n   bad: [plant-c\n", Set{}); err == nil || red != Redacted {
		t.Errorf("a document that does not parse must be redacted whole, got %q, %v", red, err)
	}
}

func TestShapesInFreeText(t *testing.T) {
	for _, line := range []string{
		"GCS started with --redis_password=plant-d",
		"connecting to redis://:plant-d@redis:6379",
		`curl -H 'Authorization: Bearer plant-d-0123456789'`,
		`x-ray-authorization: Bearer plant-d-0123456789`,
		`{"password": "plant-d"}`,
		`Driver={ODBC};Server=db;Uid=me;Password=plant-d;`,
		`DefaultEndpointsProtocol=https;AccountName=a;AccountKey=plant-d;EndpointSuffix=x`,
		`API_KEY=plant-d python app.py`,
		"-----BEGIN RSA PRIVATE KEY-----\nplant-d\n-----END RSA PRIVATE KEY-----",
		"token: ghp_" + "R7uK2cXv9QmP4sLw8ZnT3yHb6JdF1aGe0VoC",
	} {
		got := New().String(line)
		if strings.Contains(got, "plant-d") || strings.Contains(got, "R7uK2cXv9QmP4sLw8ZnT3yHb6JdF1aGe0VoC") {
			t.Errorf("%q redacted is %q", line, got)
		}
	}
}

func TestProviderFormatsByGitleaks(t *testing.T) {
	// A token under no secret name, in a line no shape of ours reads: only gitleaks' rule finds it.
	tok := "hf_" + "QmXvRpLksNwTzYbHcJdFgAeUoViKbZcDqW"
	line := "downloading model with " + tok + " now"
	if got := New().String(line); strings.Contains(got, tok) {
		t.Errorf("gitleaks' Hugging Face rule did not redact %q: %q", tok, got)
	}
}

func TestPlainTextSurvives(t *testing.T) {
	keep := []string{
		"rayproject/ray:2.41.0", "Missing authentication token", "RAY_AUTH_MODE=token",
		"Back-off restarting failed container ray-head in pod raycluster-kuberay-head-x7k2p",
		"0/3 nodes are available: 3 Insufficient memory.", "memory: 8Gi", "cpu: 500m",
		"node 7f3a9c0e1b2d4f6a8c0e1b2d4f6a8c0e1b2d4f6a8c0e1b2d4f6a8c0e is dead",
		"The node was low on resource: ephemeral-storage.", "Created container ray-worker",
		"head-evicted: the head pod was evicted", "--dashboard-host=0.0.0.0 --num-cpus=1",
		"secretKeyRef", "tokenreviews", "topologyKey: kubernetes.io/hostname",
	}
	r := New(Set{"plant-e-1234": {}})
	for _, s := range keep {
		if got := r.String(s); got != s {
			t.Errorf("%q became %q", s, got)
		}
	}
}

func TestObjectRedactsByStructure(t *testing.T) {
	obj := map[string]any{
		"spec": map[string]any{
			"entrypoint":     "python x.py --api-key=plant-f",
			"runtimeEnvYAML": "env_vars: {API_TOKEN: plant-g}",
			"serveConfigV2":  "applications: [{name: a, runtime_env: {env_vars: {HF_TOKEN: plant-h}}}]",
			"containers": []any{map[string]any{
				"name": "ray-head", "args": []any{"--redis-password", "plant-i"},
				"env": []any{map[string]any{"name": "RAY_AUTH_MODE", "value": "token"}},
			}},
		},
	}
	found := Set{}
	if p := Object(obj, found); len(p) != 0 {
		t.Fatalf("problems: %v", p)
	}
	s := strings.Join(flatten(obj), " ")
	for _, v := range []string{"plant-f", "plant-g", "plant-h", "plant-i"} {
		if strings.Contains(s, v) {
			t.Errorf("%s survives: %s", v, s)
		}
		if _, ok := found[v]; !ok {
			t.Errorf("%s not handed to the value layer", v)
		}
	}
	if !strings.Contains(s, "token") || !strings.Contains(s, "--redis-password") {
		t.Errorf("the plain parts were lost: %s", s)
	}
	bad := map[string]any{"spec": map[string]any{"serveConfigV2": "applications:\n  - a\n - b: [plant-j"}}
	p := Object(bad, Set{})
	if len(p) != 1 || p[0].Field != "spec.serveConfigV2" || strings.Contains(strings.Join(flatten(bad), ""), "plant-j") {
		t.Errorf("a malformed serveConfigV2 must be redacted whole and reported: %v %v", p, bad)
	}
}

func flatten(v any) []string {
	switch x := v.(type) {
	case map[string]any:
		var out []string
		for _, e := range x {
			out = append(out, flatten(e)...)
		}
		return out
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, flatten(e)...)
		}
		return out
	case string:
		return []string{x}
	}
	return nil
}

// The secrets free text holds are collected, a URL's secret query parameter among them.
func TestSecretsFromText(t *testing.T) {
	set := Set{}
	set.AddText(`pip: ["--index-url https://u:pipPw99@pypi.example/simple"] working_dir: "https://x.example/a.zip?token=qTok77&ref=main"`)
	for _, want := range []string{"pipPw99", "qTok77"} {
		if _, ok := set[want]; !ok {
			t.Errorf("%q not collected: %v", want, set)
		}
	}
	if _, ok := set["main"]; ok {
		t.Errorf("a query parameter of no secret name was collected: %v", set)
	}
}

func TestRedactorText(t *testing.T) {
	r := New(Set{"hunter22": {}})
	for in, want := range map[string]string{
		"pw hunter22 here":                      "pw [redacted] here",
		"rediss://user:p%40ss@host:6379/0":      "rediss://user:[redacted]@host:6379/0",
		"ray start --redis-password='a b' -x":   "ray start --redis-password='[redacted]' -x",
		"ray start --redis-password 5ecret":     "ray start --redis-password [redacted]",
		"http://host:8265/api (no credentials)": "http://host:8265/api (no credentials)",
		// A URL's query parameter named as a secret; the others are kept.
		"https://x.example/a.zip?access_token=t0k3n&ref=main": "https://x.example/a.zip?access_token=[redacted]&ref=main",
		"GET /api/jobs?limit=10&page=2":                       "GET /api/jobs?limit=10&page=2",
	} {
		if got := r.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// A value known from one object, standing in another's JSON, where JSON escapes its quote,
// backslash or newline: it is redacted in that form too (a bundle writes its objects as JSON).
func TestRedactorKnowsJSONEscapedForms(t *testing.T) {
	quoted, slashed, lines := `pa"ss&w<rd9`, `C:\keys\hunter7`, "line1\nline2-s3cr3t"
	r := New(Set{quoted: {}, slashed: {}, lines: {}})
	for _, v := range []string{quoted, slashed, lines} {
		raw, err := json.Marshal(map[string]string{"command": "start " + v + " now"})
		if err != nil {
			t.Fatal(err)
		}
		in := strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(string(raw), `\u0026`, "&"), `\u003c`, "<"), `\u003e`, ">")
		want := `{"command":"start [redacted] now"}`
		if got := r.String(in); got != want {
			t.Errorf("String(%s) = %s, want %s", in, got, want)
		}
	}
}
