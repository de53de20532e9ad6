package artifact

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	yamlv2 "go.yaml.in/yaml/v2"

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
	return JSONObjectYAML(apiVersion, kind, raw, found)
}

// JSONObjectYAML is ObjectYAML of an object already written as JSON (raw): a writer that must let
// go of the object at once keeps its JSON and renders it later.
func JSONObjectYAML(apiVersion, kind string, raw []byte, found redact.Set) ([]byte, []redact.Problem) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return []byte(fmt.Sprintf("# cannot render this %s: %v\n", kind, err)), nil
	}
	problems := redactDocument(apiVersion, kind, m, found)
	out, err := yamlv2.Marshal(yamlNumbers(m))
	if err != nil {
		return []byte(fmt.Sprintf("# cannot render this %s: %v\n", kind, err)), problems
	}
	return out, problems
}

// yamlNumbers turns the numbers of a decoded JSON document into those yaml.v2 reads from its
// text, in place, so that yaml.v2 writes the document as sigs.k8s.io/yaml.Marshal does (JSON
// text, read back by yaml.v2, written by yaml.v2) without writing and parsing the text: that
// round trip was most of a bundle's time (TestObjectYAMLAsSigsYAML holds the two to each other).
// JSON writes an integral number below 1e21 as digits, which yaml.v2 reads as an int (a uint64
// above int64's range); anything else it reads as the float it is.
func yamlNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = yamlNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = yamlNumbers(e)
		}
	case float64:
		switch {
		case x != math.Trunc(x) || math.Abs(x) >= 1e21:
		case math.Abs(x) < 1<<53:
			return int64(x)
		default:
			// Past 2^53 JSON's digits are the float's shortest form padded with zeros, which is
			// what yaml.v2 reads.
			digits := strconv.FormatFloat(x, 'f', -1, 64)
			if i, err := strconv.ParseInt(digits, 10, 64); err == nil {
				return i
			}
			if u, err := strconv.ParseUint(digits, 10, 64); err == nil {
				return u
			}
		}
	}
	return v
}
