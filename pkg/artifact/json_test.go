package artifact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// JSONObject writes the object as kubectl get -o json would, redacted: its kind, no field
// managers, numbers with the digits they came with (past 2^53 too), <, > and & as they are.
func TestJSONObject(t *testing.T) {
	raw := []byte(`{"metadata":{"name":"p","managedFields":[{"manager":"kubectl"}],"annotations":{"note":"a<b && c>d"}},` +
		`"spec":{"big":9007199254740993,"ratio":0.25,"exp":1e300,"env":[{"name":"API_TOKEN","value":"s3cr3t-value-1"}]}}`)
	found := redact.Set{}
	got, problems := JSONObject("v1", "Pod", raw, found)
	if len(problems) != 0 {
		t.Errorf("problems: %v", problems)
	}
	want := `{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {
    "annotations": {
      "note": "a<b && c>d"
    },
    "name": "p"
  },
  "spec": {
    "big": 9007199254740993,
    "env": [
      {
        "name": "API_TOKEN",
        "value": "[redacted]"
      }
    ],
    "exp": 1e300,
    "ratio": 0.25
  }
}
`
	if string(got) != want {
		t.Errorf("JSONObject wrote\n%s\nwant\n%s", got, want)
	}
	if _, ok := found["s3cr3t-value-1"]; !ok {
		t.Errorf("the redacted value was not added to found: %v", found)
	}
}

// An object that is not JSON is written as a note of why, which doctor --from skips.
func TestJSONObjectCannotRender(t *testing.T) {
	got, _ := JSONObject("v1", "Pod", []byte(`{"metadata":`), redact.Set{})
	var note map[string]string
	if err := json.Unmarshal(got, &note); err != nil || !strings.HasPrefix(note["error"], "cannot render this Pod") {
		t.Errorf("JSONObject of broken JSON wrote %s (%v)", got, err)
	}
}

// JSONObject, through goccy/go-json, writes the bytes encoding/json writes of the same redacted
// document: every test document, and numbers written in every form JSON allows.
func TestJSONObjectAsEncodingJSON(t *testing.T) {
	docs := testDocuments(t)
	var raws [][]byte
	for _, doc := range docs {
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil || obj == nil {
			continue
		}
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw)
	}
	raws = append(raws, []byte(`{"n":[0,-0,1.0,1E5,1e-7,-2.50,123456789012345678901234567890,9007199254740993],"s":"\u00e9\ud83d\ude00\u2028<&>\"\\\/\b\f\n\r\t"}`))
	for i, raw := range raws {
		got, _ := JSONObject("v1", "Thing", raw, redact.Set{})
		if want := stdJSON(t, raw); !bytes.Equal(got, want) {
			t.Errorf("document %d:\ngot\n%s\nwant\n%s", i, got, want)
		}
	}
	t.Logf("%d documents", len(raws))
}

// stdJSON is JSONObject written with encoding/json.
func stdJSON(t *testing.T, raw []byte) []byte {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	redactDocument("v1", "Thing", m, redact.Set{})
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if err := e.Encode(m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
