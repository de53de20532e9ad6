package availability

import (
	"fmt"
	"strings"
)

// PlanSLO is the SLO a run would check; a nil field is not checked.
type PlanSLO struct {
	MaxErrors       *int64   `json:"maxErrors"`
	MinAvailability *float64 `json:"minAvailabilityPercent"`
}

// String is the SLO in words, as plans show it.
func (s PlanSLO) String() string {
	var out []string
	if s.MaxErrors != nil {
		out = append(out, fmt.Sprintf("max-errors %d", *s.MaxErrors))
	}
	if s.MinAvailability != nil {
		out = append(out, fmt.Sprintf("min-availability %v%%", *s.MinAvailability))
	}
	if len(out) == 0 {
		return "none (exit 0 whatever happens)"
	}
	return strings.Join(out, ", ")
}
