package report

import (
	"encoding/json"
	"io"
)

// WriteJSON writes any experiment's report or plan as indented JSON (schemas: each experiment's page,
// e.g. docs/chaos-head-kill.md, docs/chaos-pressure.md).
func WriteJSON(w io.Writer, r any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
