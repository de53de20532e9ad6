package report

import (
	"encoding/json"
	"io"
)

// WriteJSON writes a report (*Report or *PressureReport) as indented JSON (schemas:
// docs/chaos-head-kill.md, docs/chaos-pressure.md).
func WriteJSON(w io.Writer, r any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
