package artifact

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// ObjectYAML renders obj as YAML with apiVersion and kind (listed objects carry neither),
// without managedFields, its secret-looking values and Secret references redacted (added to
// found). A field it could not read by its structure is redacted whole and returned as a
// problem, for the index to say so.
func ObjectYAML(apiVersion, kind string, obj any, found redact.Set) ([]byte, []redact.Problem) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return []byte(fmt.Sprintf("# cannot render this %s: %v\n", kind, err)), nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return []byte(fmt.Sprintf("# cannot render this %s: %v\n", kind, err)), nil
	}
	m["apiVersion"], m["kind"] = apiVersion, kind
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	problems := redact.Object(m, found)
	out, err := yaml.Marshal(m)
	if err != nil {
		return []byte(fmt.Sprintf("# cannot render this %s: %v\n", kind, err)), problems
	}
	return out, problems
}
