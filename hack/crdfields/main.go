// Command crdfields writes pkg/manifest/crdfields_gen.go: for each Ray kind and API version, the
// fields of KubeRay's CRDs that some releases have and others do not, read from each release's
// own CRDs (ray-operator/config/crd/bases in its Go module). doctor -f judges a document against
// the release that would run it with this table (rule field-dropped).
//
//	go run ./hack/crdfields
//
// It downloads each release's module through the Go module proxy (go mod download); a release
// the proxy does not serve is read from the sandbox's pinned source archive of it
// (test/sandbox/upstream.go) when there is one, else named in the output's comment and left out.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/manifest"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

// releases are KubeRay's releases since ray.io/v1 (v1.0.0), oldest first. A new release is added
// here and the table written again.
var releases = []string{
	"v1.0.0", "v1.1.0", "v1.1.1", "v1.2.0", "v1.2.1", "v1.2.2", "v1.3.0", "v1.3.1", "v1.3.2",
	"v1.4.0", "v1.4.1", "v1.4.2", "v1.5.0", "v1.5.1", "v1.6.0", "v1.6.1", "v1.6.2", "v1.7.0",
}

var kinds = map[string]string{"RayCluster": "rayclusters", "RayJob": "rayjobs", "RayService": "rayservices"}

const module = "github.com/ray-project/kuberay/ray-operator"

func main() {
	out := flag.String("o", "pkg/manifest/crdfields_gen.go", "where to write the table")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "crdfields:", err)
		os.Exit(1)
	}
}

// schemaKey is one kind in one API version.
type schemaKey struct{ kind, api string }

func run(out string) error {
	var served []string
	var missing []string
	// present[key][path] lists the releases (indexes into served) whose CRD has path.
	present := map[schemaKey]map[string][]int{}
	for _, rel := range releases {
		dir, err := download(rel)
		if err != nil {
			missing = append(missing, rel)
			continue
		}
		served = append(served, rel)
		for kind, file := range kinds {
			paths, err := crdPaths(filepath.Join(dir, "config", "crd", "bases", "ray.io_"+file+".yaml"))
			if err != nil {
				return fmt.Errorf("%s %s: %w", rel, kind, err)
			}
			for api, ps := range paths {
				k := schemaKey{kind, api}
				if present[k] == nil {
					present[k] = map[string][]int{}
				}
				for p := range ps {
					present[k][p] = append(present[k][p], len(served)-1)
				}
			}
		}
	}
	if len(served) < 2 {
		return fmt.Errorf("only %d releases could be downloaded: %v missing", len(served), missing)
	}
	// A field of one API version that no release has in another (ray.io/v1alpha1 stopped at
	// KubeRay v1.0's fields) is listed there with no release: the API server drops it there.
	for k := range present {
		for other := range present {
			if other.kind != k.kind || other == k {
				continue
			}
			for p := range present[other] {
				if _, ok := present[k][p]; !ok {
					present[k][p] = nil
				}
			}
		}
	}
	return write(out, served, missing, present)
}

// download fetches one release's module and returns its directory.
func download(rel string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+rel)
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := cmd.Run()
	var m struct{ Dir, Error string }
	if jerr := json.Unmarshal(stdout.Bytes(), &m); jerr != nil || m.Dir == "" {
		dir, uerr := sandbox.UpstreamOperator(rel)
		if uerr != nil {
			return "", fmt.Errorf("%s: %v %s; %v", rel, err, m.Error, uerr)
		}
		return dir, nil
	}
	return m.Dir, nil
}

// crdPaths reads one CRD file and returns, for each API version it serves, the set of its spec's
// field paths ("spec.workerGroupSpecs[].suspend").
func crdPaths(file string) (map[string]map[string]bool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string
				Served bool
				Schema struct {
					OpenAPIV3Schema struct {
						Properties map[string]json.RawMessage
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		return nil, err
	}
	out := map[string]map[string]bool{}
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		var spec map[string]any
		if err := json.Unmarshal(v.Schema.OpenAPIV3Schema.Properties["spec"], &spec); err != nil {
			return nil, err
		}
		paths := map[string]bool{}
		walk(spec, "spec", paths)
		out[v.Name] = paths
	}
	return out, nil
}

func walk(schema map[string]any, at string, paths map[string]bool) {
	if schema["type"] == "array" {
		if items, ok := schema["items"].(map[string]any); ok {
			walk(items, at+"[]", paths)
		}
		return
	}
	props, _ := schema["properties"].(map[string]any)
	for name, sub := range props {
		p := at + "." + name
		paths[p] = true
		if manifest.EmbeddedFields[name] {
			continue
		}
		if s, ok := sub.(map[string]any); ok {
			walk(s, p, paths)
		}
	}
}

// span is a run of consecutive served releases, by index.
type span struct{ from, to int }

func spans(idx []int) []span {
	var out []span
	for _, i := range idx {
		if n := len(out); n > 0 && out[n-1].to == i-1 {
			out[n-1].to = i
			continue
		}
		out = append(out, span{i, i})
	}
	return out
}

func write(out string, served, missing []string, present map[schemaKey]map[string][]int) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by go run ./hack/crdfields; DO NOT EDIT.\n\npackage manifest\n\n")
	fmt.Fprintf(&b, "// crdReleases are the KubeRay releases whose CRDs the table was read from, oldest first.\n")
	fmt.Fprintf(&b, "var crdReleases = %#v\n\n", served)
	if len(missing) > 0 {
		fmt.Fprintf(&b, "// The module proxy served no module for %s: their CRDs are not in the table.\n\n", strings.Join(missing, ", "))
	}
	fmt.Fprintf(&b, "// crdFields are, by kind and API version, the fields some of crdReleases' CRDs have and others\n")
	fmt.Fprintf(&b, "// not, each with the runs of releases that have it (a field below one listed with the same runs\n")
	fmt.Fprintf(&b, "// is left out: its parent says it). A field in every release's CRD is not listed.\n")
	fmt.Fprintf(&b, "var crdFields = map[string]map[string][]crdField{\n")
	keys := make([]schemaKey, 0, len(present))
	for k := range present {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].kind != keys[j].kind {
			return keys[i].kind < keys[j].kind
		}
		return keys[i].api < keys[j].api
	})
	lastKind := ""
	for _, k := range keys {
		if k.kind != lastKind {
			if lastKind != "" {
				fmt.Fprintf(&b, "},\n")
			}
			fmt.Fprintf(&b, "%q: {\n", k.kind)
			lastKind = k.kind
		}
		fmt.Fprintf(&b, "%q: {\n", k.api)
		runsOf := map[string]string{}
		paths := make([]string, 0, len(present[k]))
		for p, idx := range present[k] {
			if len(idx) == len(served) {
				continue
			}
			rs := []string{}
			for _, s := range spans(idx) {
				to := served[s.to]
				if s.to == len(served)-1 {
					to = ""
				}
				rs = append(rs, fmt.Sprintf("{%q, %q}", served[s.from], to))
			}
			runsOf[p] = strings.Join(rs, ", ")
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			if runs, ok := runsOf[parentOf(p)]; ok && runs == runsOf[p] {
				continue
			}
			fmt.Fprintf(&b, "{%q, []releaseRun{%s}},\n", p, runsOf[p])
		}
		fmt.Fprintf(&b, "},\n")
	}
	fmt.Fprintf(&b, "},\n}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return fmt.Errorf("format: %w\n%s", err, b.String())
	}
	return os.WriteFile(out, src, 0o644)
}

// parentOf is the field a path is in: "spec.a[].b" → "spec.a[]"→ "spec.a".
func parentOf(p string) string {
	i := strings.LastIndex(p, ".")
	if i < 0 {
		return ""
	}
	return strings.TrimSuffix(p[:i], "[]")
}
