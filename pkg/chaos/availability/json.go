package availability

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

// JSON is a report under the probe as one JSON object, in the order every report's schema has:
// head's own fields (apiVersion, kind, settings, probe), the totals and the error window, the
// experiment's own section under name, then the endpoints, latency, seconds, events and
// verdict, and the advice when a has any list (an upgrade's report has no advice: nil).
func JSON(head any, a *Availability, name string, section any) ([]byte, error) {
	parts := []any{head,
		struct {
			Totals      Totals  `json:"totals"`
			ErrorWindow *Window `json:"errorWindow"`
		}{a.Totals, a.ErrorWindow},
		map[string]any{name: section},
		struct {
			Endpoints []Endpoint `json:"endpoints"`
			Latency   Latency    `json:"latency"`
			Seconds   []Second   `json:"seconds"`
			Events    []Event    `json:"events"`
			Verdict   Verdict    `json:"verdict"`
		}{a.Endpoints, a.Latency, a.Seconds, a.Events, a.Verdict},
	}
	if a.Advice != nil {
		parts = append(parts, struct {
			Advice []Advice `json:"advice"`
		}{a.Advice})
	}
	out := []byte{'{'}
	for _, p := range parts {
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		if inner := b[1 : len(b)-1]; len(inner) > 0 {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, inner...)
		}
	}
	return append(out, '}'), nil
}
