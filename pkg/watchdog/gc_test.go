package watchdog

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, c := range []struct {
		name, gogc, memlimit string
		want                 int
	}{
		{"default", "", "", watchGCPercent},
		{"GOGC set", "200", "", 100},
		{"GOMEMLIMIT set", "", "200MiB", 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOGC", c.gogc)
			t.Setenv("GOMEMLIMIT", c.memlimit)
			debug.SetGCPercent(100)
			tuneGC()
			if got := debug.SetGCPercent(100); got != c.want {
				t.Errorf("GC percent %d, want %d", got, c.want)
			}
		})
	}
}
