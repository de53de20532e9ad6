package pressure

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/timeline"
)

// rampRE is the memory script's line once every holder has its share resident
// (script_memory.go): the bytes, and the seconds since the script's start by /proc/uptime.
var rampRE = regexp.MustCompile(`(?m)^(\S+): allocated (\d+) bytes, resident (\d+)\.(\d\d)s after start;`)

// ParseRamp reads the ramp from the log of container: how many bytes were resident, how long
// after the script's start. ok is false until the log has the line.
func ParseRamp(log, container string) (bytes int64, after time.Duration, ok bool) {
	for _, m := range rampRE.FindAllStringSubmatch(log, -1) {
		if m[1] != container {
			continue
		}
		b, err1 := strconv.ParseInt(m[2], 10, 64)
		s, err2 := strconv.ParseInt(m[3], 10, 64)
		cs, err3 := strconv.ParseInt(m[4], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		return b, time.Duration(s)*time.Second + time.Duration(cs)*10*time.Millisecond, true
	}
	return 0, 0, false
}

// ObserveLog takes what the log of our container says so far: the ramp, once.
func (t *Timeline) ObserveLog(log string, now time.Time) {
	if t.ramp != nil {
		return
	}
	b, after, ok := ParseRamp(log, t.Container)
	if !ok {
		return
	}
	t.ramp = &Ramp{Bytes: b, ResidentMs: float64(after.Milliseconds()), SeenMs: float64(now.Sub(t.Start).Milliseconds())}
	t.note(now, "reached", timeline.Event{Kind: timeline.PressureReached, Object: t.Container, Detail: fmt.Sprintf("%d bytes %s after start", b, after)},
		"%s: %d bytes resident %s after it started (its log)", t.Container, b, after)
}

// rampPoll is how often --watch-eviction reads the memory container's log until it has the ramp.
const rampPoll = 500 * time.Millisecond

// followRamp reads the start of our container's log every rampPoll and sends it on logs until it
// has the ramp line or ctx ends. A log that cannot be read yet (the container not started) is
// read again; one never read leaves the ramp unknown, which the report shows as null.
func followRamp(ctx context.Context, c Cluster, namespace, pod, container string, logs chan<- string) {
	tick := time.NewTicker(rampPoll)
	defer tick.Stop()
	for {
		if log, err := c.ContainerLog(ctx, namespace, pod, container, 64<<10); err == nil && strings.Contains(log, "resident") {
			if _, _, ok := ParseRamp(log, container); ok {
				select {
				case logs <- log:
				case <-ctx.Done():
				}
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
