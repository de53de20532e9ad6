package headkill

import (
	"context"
	"fmt"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
)

// Doctor is doctor's advice about the target, read before the kill: the command runs doctor's
// rules (an experiment runs none) and keeps the findings about 502s during a head restart.
type Doctor func(ctx context.Context) ([]availability.Advice, error)

// doctorAdvice is what s.Doctor says. Without permission to read what doctor reads there is no
// doctor advice; the run goes on.
func doctorAdvice(ctx context.Context, s *Settings) []availability.Advice {
	if s.Doctor == nil {
		return nil
	}
	advice, err := s.Doctor(ctx)
	if err != nil {
		fmt.Fprintf(s.Warn, "warning: no doctor advice: %v\n", err)
		return nil
	}
	return advice
}
