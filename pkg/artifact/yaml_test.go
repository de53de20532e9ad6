package artifact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// ObjectYAML writes the bytes sigs.k8s.io/yaml.Marshal writes (which bundles, heal's evidence and
// their goldens were made with) without its JSON round trip: every document of the rule fixtures,
// the bundle's scenes and values chosen for how yaml.v2 reads and quotes them.
func TestObjectYAMLAsSigsYAML(t *testing.T) {
	docs := testDocuments(t)
	checked := 0
	for i, doc := range docs {
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil || obj == nil {
			continue
		}
		got, _ := ObjectYAML("v1", "Thing", obj, redact.Set{})
		want := sigsYAML(t, obj)
		if !bytes.Equal(got, want) {
			t.Errorf("document %d:\ngot\n%q\nwant\n%q", i, got, want)
		}
		checked++
	}
	t.Logf("%d documents", checked)
}

// sigsYAML is ObjectYAML as it was: sigs.k8s.io/yaml.Marshal of the redacted JSON document.
func sigsYAML(t *testing.T, obj any) []byte {
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["apiVersion"], m["kind"] = "v1", "Thing"
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	redact.Object(m, redact.Set{})
	out, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(fmt.Errorf("sigs.k8s.io/yaml: %w", err))
	}
	return out
}

// testDocuments is every document of the rule fixtures and the bundle's scenes, and one of values
// chosen for how writers read, quote and escape them (numbers, YAML's special words, escapes).
func testDocuments(t *testing.T) [][]byte {
	t.Helper()
	var docs [][]byte
	for _, glob := range []string{"../diagnose/testdata/rules/*.yaml", "../cmd/bundle/testdata/*.yaml", "../bundle/testdata/*.yaml", "../manifest/testdata/rules/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, bytes.Split(data, []byte("\n---"))...)
		}
	}
	if len(docs) < 100 {
		t.Fatalf("only %d documents", len(docs))
	}
	odd := map[string]any{"metadata": map[string]any{"name": "odd", "annotations": map[string]any{"a10": "x", "a9": "y", "A": "z"}},
		"ints":   []any{0, -1, 6379, 2147483648, int64(1) << 62, uint64(1) << 63, 1e20, 1e21, 1e22, 0.5, -0.25, 1e-7, 3.0},
		"quoted": []any{"yes", "no", "on", "off", "true", "null", "~", "", " ", "1e3", "0x10", "0o7", "012", "1_000", "1:30", ".inf", "-.5", "2026-12-06T21:54:46Z", "2026-12-06"},
		"text": []any{"a: b", "- x", "[redacted]", "{x}", "#x", "x #y", "x\ny", "x\n", "\ttab", "ünïcödé", "€", "\u2028", "\x00", "'q'", `"d"`, "@x", "`x`", "%x", "!x", "&x", "*x", "|x", ">x",
			"ulimit -n 65536; ray start --head --dashboard-host=0.0.0.0 --metrics-export-port=8080 --block --dashboard-agent-listen-port=52365 --num-cpus=1",
			"a very long line with spaces that goes on and on past the eightieth column of the emitter, and then some more: words words words",
			"line one\nline two with trailing spaces   \n  indented line three\n"},
		"empty": map[string]any{}, "emptyList": []any{}, "nil": nil, "bools": []any{true, false},
	}
	raw, _ := json.Marshal(odd)
	docs = append(docs, raw)
	return docs
}
