package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// The chart passes Helm's own linter (the checks of `helm lint --strict`), with the defaults
// and with every switch of the matrix on.
func TestLint(t *testing.T) {
	for _, c := range matrix {
		l := action.NewLint()
		l.Strict, l.Namespace = true, "ray-system"
		res := l.Run([]string{chartDir}, c.values)
		if res.TotalChartsLinted != 1 {
			t.Errorf("%s: helm lint linted %d charts", c.name, res.TotalChartsLinted)
		}
		// As helm lint --strict: a warning fails, an [INFO] (no icon) does not.
		if !action.HasWarningsOrErrors(res) {
			continue
		}
		for _, m := range res.Messages {
			t.Errorf("%s: helm lint: %s", c.name, m)
		}
		for _, err := range res.Errors {
			t.Errorf("%s: helm lint: %v", c.name, err)
		}
	}
}

// docs/deploy/watchdog.yaml and monitoring.yaml are the chart rendered (go run . render): an edit
// of either file alone fails here.
func TestPlainFilesAreTheChart(t *testing.T) {
	have, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	haveMon, err := os.ReadFile(monitoring)
	if err != nil {
		t.Fatal(err)
	}
	w, m, err := PlainFiles(chartDir, imageDigest(have))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w, have) {
		t.Errorf("%s is not the chart rendered with its defaults: run cd hack/chart && go run . render", manifest)
	}
	if !bytes.Equal(m, haveMon) {
		t.Errorf("%s is not the chart's monitoring objects: run cd hack/chart && go run . render", monitoring)
	}
}

// Chart.yaml's version is the release's without its v; appVersion, the default image tag, is the
// release's tag; the plain manifest runs that tag.
func TestChartVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Version, AppVersion string }
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if "v"+c.Version != c.AppVersion || !releaseVersion.MatchString(c.AppVersion) {
		t.Errorf("Chart.yaml: version %q, appVersion %q; want X.Y.Z and vX.Y.Z (go run . version vX.Y.Z)", c.Version, c.AppVersion)
	}
	have, _ := os.ReadFile(manifest)
	if !regexp.MustCompile(`(?m)^\s+image: kubectl-ray/kubectl-ray:` + regexp.QuoteMeta(c.AppVersion) + `(@sha256:[0-9a-f]{64})?$`).Match(have) {
		t.Errorf("%s does not run kubectl-ray/kubectl-ray:%s", manifest, c.AppVersion)
	}
	dir := t.TempDir()
	for _, f := range []string{"Chart.yaml"} {
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	if err := SetVersion(dir, "v1.2.3"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if !strings.Contains(string(got), "\nversion: 1.2.3\n") || !strings.Contains(string(got), "\nappVersion: v1.2.3\n") {
		t.Errorf("SetVersion v1.2.3:\n%s", got)
	}
	if err := SetVersion(dir, "1.2.3"); err == nil {
		t.Error("SetVersion accepted 1.2.3")
	}
}

// A wrong value fails with Helm's schema message, naming the value.
func TestSchemaRejects(t *testing.T) {
	for _, c := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"replicas": 0}, "replicas"},
		{map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, "pullPolicy"},
		{map[string]any{"image": map[string]any{"digest": "sha256:abc"}}, "digest"},
		{map[string]any{"watchNamespaces": []any{"Not_A_Namespace"}}, "watchNamespaces"},
		{map[string]any{"heal": map[string]any{"minAge": "ten seconds"}}, "minAge"},
		{map[string]any{"heal": map[string]any{"workers": 65}}, "workers"},
		{map[string]any{"replica": 3}, "replica"},
		{map[string]any{"hostNetwork": "yes"}, "hostNetwork"},
		{map[string]any{"env": []any{map[string]any{"value": "x"}}}, "name"},
	} {
		_, err := Render(chartDir, "w", "ray-system", c.values)
		if err == nil || !strings.Contains(err.Error(), "values don't meet the specifications of the schema") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want Helm's schema error naming %s", c.values, err, c.want)
		}
	}
}

type matrixCase struct {
	name   string
	values map[string]any
}

var matrix = []matrixCase{
	{"defaults", nil},
	{"namespaced", map[string]any{"watchNamespaces": []any{"team-a", "team-b"}, "heal": map[string]any{"force": true}}},
	{"no RBAC", map[string]any{"rbac": map[string]any{"create": false}, "serviceAccount": map[string]any{"create": false, "name": "mine"}}},
	{"monitors on", map[string]any{"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true},
		"podMonitor": map[string]any{"enabled": true}, "prometheusRule": map[string]any{"enabled": true, "additionalLabels": map[string]any{"release": "prometheus"}}}}},
	{"replicas 1", map[string]any{"replicas": 1, "heal": map[string]any{"dryRun": true, "minAge": "1m", "workers": 8, "extraArgs": []any{"--stale-workers"}}}},
	{"replicas 3", map[string]any{"replicas": 3, "podAnnotations": map[string]any{"a": "b"}, "priorityClassName": "high",
		"nodeSelector": map[string]any{"pool": "system"}, "tolerations": []any{map[string]any{"key": "k", "operator": "Exists"}},
		"hostNetwork": true, "env": []any{map[string]any{"name": "HTTPS_PROXY", "value": "http://proxy.example:3128"}}}},
	{"digest", map[string]any{"image": map[string]any{"repository": "registry.example.com/kubectl-ray", "tag": "v9.9.9",
		"digest": "sha256:" + strings.Repeat("a", 64), "pullPolicy": "Always"}, "imagePullSecrets": []any{map[string]any{"name": "regcred"}}}},
}

// object is one rendered document: its kind, namespace and name, and its body.
type object struct {
	Kind     string
	Metadata struct{ Name, Namespace string }
	raw      []byte
}

func renderObjects(t *testing.T, values map[string]any) ([]object, string) {
	t.Helper()
	r, err := Render(chartDir, "w", "ray-system", values)
	if err != nil {
		t.Fatal(err)
	}
	var objs []object
	for _, d := range Documents(r.Manifest) {
		var o object
		if err := yaml.Unmarshal([]byte(d), &o); err != nil {
			t.Fatalf("%v\n%s", err, d)
		}
		o.raw, err = yaml.YAMLToJSON([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	return objs, r.Notes
}

func decode[T any](t *testing.T, o object) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(o.raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func index(objs []object) map[string]object {
	m := map[string]object{}
	for _, o := range objs {
		m[o.Kind+" "+o.Metadata.Namespace+"/"+o.Metadata.Name] = o
	}
	return m
}

func keys(m map[string]object) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	slices.Sort(k)
	return k
}

// Each case of the matrix renders exactly the objects it should, with the content it should.
func TestMatrix(t *testing.T) {
	for _, c := range matrix {
		t.Run(c.name, func(t *testing.T) {
			objs, notes := renderObjects(t, c.values)
			got := index(objs)
			want := wantObjects[c.name]
			if !slices.Equal(keys(got), want) {
				t.Fatalf("objects:\n  %s\nwant:\n  %s", strings.Join(keys(got), "\n  "), strings.Join(want, "\n  "))
			}
			for k, o := range got {
				if o.Kind == "Deployment" {
					checkDeployment(t, c.name, decode[appsv1.Deployment](t, o))
				}
				if o.Kind == "ClusterRole" || o.Kind == "Role" {
					checkRole(t, k, decode[rbacv1.ClusterRole](t, o))
				}
			}
			checkCase(t, c.name, got, notes)
		})
	}
}

var wantObjects = map[string][]string{
	"defaults": {
		"ClusterRole /kubectl-ray-heal", "ClusterRoleBinding /kubectl-ray-heal",
		"Deployment ray-system/kubectl-ray-heal", "Lease ray-system/kubectl-ray-heal",
		"PodDisruptionBudget ray-system/kubectl-ray-heal",
		"Role ray-system/kubectl-ray-heal-lease", "RoleBinding ray-system/kubectl-ray-heal-lease",
		"Service ray-system/kubectl-ray-heal-metrics", "ServiceAccount ray-system/kubectl-ray-heal",
	},
	"namespaced": {
		"ClusterRole /kubectl-ray-heal-nodes", "ClusterRoleBinding /kubectl-ray-heal-nodes",
		"Deployment ray-system/kubectl-ray-heal-team-a", "Deployment ray-system/kubectl-ray-heal-team-b",
		"Lease team-a/kubectl-ray-heal", "Lease team-b/kubectl-ray-heal",
		"PodDisruptionBudget ray-system/kubectl-ray-heal-team-a", "PodDisruptionBudget ray-system/kubectl-ray-heal-team-b",
		"Role team-a/kubectl-ray-heal", "Role team-a/kubectl-ray-heal-lease",
		"Role team-b/kubectl-ray-heal", "Role team-b/kubectl-ray-heal-lease",
		"RoleBinding team-a/kubectl-ray-heal", "RoleBinding team-a/kubectl-ray-heal-lease",
		"RoleBinding team-b/kubectl-ray-heal", "RoleBinding team-b/kubectl-ray-heal-lease",
		"Service ray-system/kubectl-ray-heal-metrics", "ServiceAccount ray-system/kubectl-ray-heal",
	},
	"no RBAC": {
		"Deployment ray-system/kubectl-ray-heal", "Lease ray-system/kubectl-ray-heal",
		"PodDisruptionBudget ray-system/kubectl-ray-heal", "Service ray-system/kubectl-ray-heal-metrics",
	},
	"monitors on": {
		"ClusterRole /kubectl-ray-heal", "ClusterRoleBinding /kubectl-ray-heal",
		"Deployment ray-system/kubectl-ray-heal", "Lease ray-system/kubectl-ray-heal",
		"PodDisruptionBudget ray-system/kubectl-ray-heal", "PodMonitor ray-system/kubectl-ray-heal",
		"PrometheusRule ray-system/kubectl-ray-heal",
		"Role ray-system/kubectl-ray-heal-lease", "RoleBinding ray-system/kubectl-ray-heal-lease",
		"Service ray-system/kubectl-ray-heal-metrics", "ServiceAccount ray-system/kubectl-ray-heal",
		"ServiceMonitor ray-system/kubectl-ray-heal",
	},
	"replicas 1": {
		"ClusterRole /kubectl-ray-heal", "ClusterRoleBinding /kubectl-ray-heal",
		"Deployment ray-system/kubectl-ray-heal",
		"Service ray-system/kubectl-ray-heal-metrics", "ServiceAccount ray-system/kubectl-ray-heal",
	},
}

func init() {
	wantObjects["replicas 3"] = wantObjects["defaults"]
	wantObjects["digest"] = wantObjects["defaults"]
}

// The chart packages for its own version; for any other tag Package refuses, naming both.
func TestPackage(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	var c struct{ AppVersion string }
	yaml.Unmarshal(b, &c)
	dir := t.TempDir()
	path, err := Package(chartDir, c.AppVersion, dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "kubectl-ray-watchdog-"+strings.TrimPrefix(c.AppVersion, "v")+".tgz"); path != want {
		t.Errorf("packaged %s, want %s", path, want)
	}
	if _, err := Package(chartDir, "v9.9.9", dir); err == nil || !strings.Contains(err.Error(), `want "9.9.9" and "v9.9.9"`) {
		t.Errorf("Package for another tag: %v", err)
	}
}
