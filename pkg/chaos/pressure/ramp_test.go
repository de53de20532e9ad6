package pressure

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
)

// The ramp is read from the very line the script logs (script_run_test.go runs it).
func TestParseRamp(t *testing.T) {
	const c = "kubectl-ray-memory-pressure-abcde"
	log := c + ": allocating 2147483648 bytes (2 holders of at most 1073741824 bytes each)\n" +
		c + ": allocated 2147483648 bytes, resident 1.07s after start; holding until 60s after start\n"
	b, after, ok := ParseRamp(log, c)
	if !ok || b != 2<<30 || after != 1070*time.Millisecond {
		t.Fatalf("ParseRamp = %d, %s, %v; want 2Gi, 1.07s, true", b, after, ok)
	}
	if _, _, ok := ParseRamp(strings.SplitAfter(log, "\n")[0], c); ok {
		t.Error("a log without the line has a ramp")
	}
	if _, _, ok := ParseRamp(log, "kubectl-ray-memory-pressure-other"); ok {
		t.Error("another container's line is taken as ours")
	}
}

// The script's own output parses: the line it really writes, not a copy of it.
func TestParseRampOfTheScript(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		s := memSpec(t.TempDir(), 4<<20, time.Second)
		r := start(t, sh, Script(s))
		r.exits(t, 0, 10*time.Second)
		if b, _, ok := ParseRamp(r.out.String(), s.Name); !ok || b != 4<<20 {
			t.Errorf("no ramp of 4Mi in:\n%s", r.out)
		}
	})
}

func TestTimelineRampOnce(t *testing.T) {
	start := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	tl := &Timeline{Start: start, Pod: "p", Container: "kubectl-ray-memory-pressure-abcde"}
	line := "kubectl-ray-memory-pressure-abcde: allocated 1024 bytes, resident 0.40s after start; holding until 9s after start\n"
	tl.ObserveLog("nothing yet", start.Add(time.Second))
	tl.ObserveLog(line, start.Add(2*time.Second))
	tl.ObserveLog(line, start.Add(3*time.Second))
	var got []timeline.Event
	for _, e := range tl.Events() {
		if e.Kind == timeline.PressureReached {
			got = append(got, e)
		}
	}
	if len(got) != 1 || got[0].Message != "kubectl-ray-memory-pressure-abcde: 1024 bytes resident 400ms after it started (its log)" {
		t.Fatalf("reached events: %+v", got)
	}
	if tl.ramp == nil || tl.ramp.ResidentMs != 400 || tl.ramp.SeenMs != 2000 || tl.ramp.Bytes != 1024 {
		t.Errorf("ramp %+v", tl.ramp)
	}
}
