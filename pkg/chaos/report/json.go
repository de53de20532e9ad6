package report

import (
	"encoding/json"
	"io"
)

// WriteJSON writes the report as indented JSON (schema: docs/chaos-head-kill.md).
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
