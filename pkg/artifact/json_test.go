package artifact

import (
	"encoding/json"
	"strings"
	"testing"

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
