package availability

import "fmt"

// The observed advice every experiment that disrupts after a warm-up may open with; scripts and
// each experiment's page refer to these rule IDs.
const (
	AdviceWarmupFailed = "warmup-failed"
	AdvicePartial      = "partial-run"
)

// Observed is an experiment's advice drawn from this run only.
type Observed []Advice

// Add appends one piece; it names the fact it rests on.
func (o *Observed) Add(rule, format string, a ...any) {
	*o = append(*o, Advice{Source: "observed", Rule: rule, Text: fmt.Sprintf(format, a...)})
}

// OpenAdvice is how the observed advice of a disruption after a warm-up opens, and whether the
// rest applies: a failed warm-up says nothing was done (notDone, e.g. "Nothing was drained")
// and why (onlyAfter), and ends it; a run that never disrupted says nothing; an interrupted one
// says its numbers cover only what was seen.
func OpenAdvice(p ProbeInfo, t Totals, notDone, onlyAfter string) (Observed, bool) {
	out := Observed{}
	switch {
	case p.WarmupFailed:
		out.Add(AdviceWarmupFailed, "%s: %d of %s failed. %s", notDone, t.Errors, Plural(t.Requests, "warm-up request", "warm-up requests"), onlyAfter)
		return out, false
	case p.KillAtMs == nil:
		return out, false
	case p.Interrupted:
		out.Add(AdvicePartial, "The run was interrupted after %d of %s; the numbers cover only what was seen.",
			p.Scheduled, Plural(p.Planned, "planned request", "planned requests"))
	}
	return out, true
}
