package gc

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestTune(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	for _, c := range []struct {
		name, gogc, memlimit string
		p                    Policy
		percent              int
		limit                int64
	}{
		{"watchdog", "", "", Watchdog, 35, math.MaxInt64},
		{"one-shot", "", "", OneShot, 100, 90 << 20},
		{"GOGC set", "200", "", Watchdog, 100, math.MaxInt64},
		{"GOMEMLIMIT set", "", "200MiB", OneShot, 100, math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOGC", c.gogc)
			t.Setenv("GOMEMLIMIT", c.memlimit)
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			Tune(c.p)
			if got := debug.SetGCPercent(100); got != c.percent {
				t.Errorf("GC percent %d, want %d", got, c.percent)
			}
			if got := debug.SetMemoryLimit(math.MaxInt64); got != c.limit {
				t.Errorf("memory limit %d, want %d", got, c.limit)
			}
		})
	}
}
