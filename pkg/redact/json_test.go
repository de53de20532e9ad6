package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// A JSON document stays JSON through the redactor, however its secrets stand: inside a string
// that holds JSON (kubectl's last-applied-configuration, where an escaped quote follows the
// token), a flag's quoted value (which the text shows escaped), or under a secret-sounding key.
func TestKnownJSONKeepsTheDocumentJSON(t *testing.T) {
	inner, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		"owner-contact": `curl -H "Authorization: Bearer T0k3nValue123456" https://ops`}}})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := json.MarshalIndent(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(inner)}},
		"spec":     map[string]any{"command": "start --password \"pa\\ss-9wd\" now", "password": "hunter2x-value", "plain": "nothing here"},
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	r := New()
	got := r.KnownJSON(string(doc))
	if !json.Valid([]byte(got)) {
		t.Fatalf("not JSON after redaction:\n%s", got)
	}
	for _, secret := range []string{"T0k3nValue123456", `pa\\ss-9wd`, "hunter2x-value"} {
		if strings.Contains(got, secret) {
			t.Errorf("%s survived:\n%s", secret, got)
		}
	}
	if !strings.Contains(got, `"plain": "nothing here"`) {
		t.Errorf("a plain field was changed:\n%s", got)
	}
	// The string that held JSON still does.
	var back struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatal(err)
	}
	if la := back.Metadata.Annotations["kubectl.kubernetes.io/last-applied-configuration"]; !json.Valid([]byte(la)) {
		t.Errorf("the last-applied-configuration no longer holds JSON: %s", la)
	}
}

// A document with no secret is written as it came, byte for byte, indentation included.
func TestKnownJSONLeavesCleanDocuments(t *testing.T) {
	doc := "{\n    \"a\": [1, 2.50, \"x\\u00e9\"],\n  \"b\": {\"c\": null}\n}\n"
	if got := New(Set{"unrelated-secret": {}}).KnownJSON(doc); got != doc {
		t.Errorf("KnownJSON changed a clean document:\n%q\nwant\n%q", got, doc)
	}
}

// What a JSON document shows inside an escape is learned as the value it is, so that the bare
// value is redacted in every other file.
func TestLearnJSONUnescapes(t *testing.T) {
	doc, err := json.Marshal(map[string]string{"la": `{"h":"Authorization: Bearer Zq9TokenValue77"}`})
	if err != nil {
		t.Fatal(err)
	}
	r := New()
	r.LearnJSON(string(doc))
	if got := r.Known("the token Zq9TokenValue77 again"); strings.Contains(got, "Zq9TokenValue77") {
		t.Errorf("the token was not learned clean: %s", got)
	}
}
