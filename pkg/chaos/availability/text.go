package availability

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// barWidth is the widest per-second bar in the terminal timeline.
const barWidth = 40

// Classes are the outcomes a per-second bar shows, in its order; their symbols differ by shape,
// so the timeline reads without color too.
var Classes = []struct {
	Name, Sym, Color string
	Count            func(Second) int
}{
	{"2xx/3xx", "█", "\x1b[32m", func(s Second) int { return s.OK }},
	{"4xx", "x", "\x1b[33m", func(s Second) int { return s.S4xx }},
	{"5xx", "X", "\x1b[31m", func(s Second) int { return s.S5xx }},
	{"connection", "C", "\x1b[35m", func(s Second) int { return s.Conn }},
	{"timeout", "T", "\x1b[34m", func(s Second) int { return s.Timeout }},
}

const reset = "\x1b[0m"

// Printer keeps the first write error so the layout code stays readable.
type Printer struct {
	W   io.Writer
	Err error
}

// F prints unless a write failed before.
func (p *Printer) F(format string, a ...any) {
	if p.Err == nil {
		_, p.Err = fmt.Fprintf(p.W, format, a...)
	}
}

// Keep keeps err unless a write failed before.
func (p *Printer) Keep(err error) {
	if p.Err == nil {
		p.Err = err
	}
}

func paint(s, color string, on bool) string {
	if !on {
		return s
	}
	return color + s + reset
}

// StepAt is when a step of the recovery or the upgrade was seen ("not seen" when it was not),
// then extra, after sep.
func StepAt(v *float64, sep, extra string) string {
	val := "not seen"
	if v != nil {
		val = Secs(*v)
	}
	if extra != "" {
		val += sep + extra
	}
	return val
}

// Secs prints a millisecond offset as signed seconds: +1.234s, -10.000s.
func Secs(msv float64) string {
	if msv < 0 {
		return fmt.Sprintf("-%.3fs", -msv/1000)
	}
	return fmt.Sprintf("+%.3fs", msv/1000)
}

// OptSecs is Secs, or "-" for nil.
func OptSecs(v *float64) string {
	if v == nil {
		return "-"
	}
	return Secs(*v)
}

// Counts prints a count map sorted by key (numerically when the keys are status codes).
func Counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		ai, aerr := strconv.Atoi(a)
		bi, berr := strconv.Atoi(b)
		if aerr == nil && berr == nil {
			return ai - bi
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}
