package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// Format is an -o value: the one type every writer switches on, so a format is a name the
// compiler knows rather than a string each command spells.
type Format string

// The formats the commands print; each command offers its own subset (AddOutputFlag).
const (
	FormatTable      Format = "table"
	FormatWide       Format = "wide"
	FormatText       Format = "text"
	FormatJSON       Format = "json"
	FormatYAML       Format = "yaml"
	FormatJUnit      Format = "junit"
	FormatPrometheus Format = "prometheus"
)

// PrintStructured writes v as indented JSON or as YAML; any other format is an error, never a
// silent JSON.
func PrintStructured(w io.Writer, f Format, v any) error {
	switch f {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case FormatYAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("cannot print -o %s as structured data: only -o json or -o yaml", f)
}
