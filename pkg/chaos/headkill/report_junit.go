package headkill

import (
	"fmt"
	"io"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/availability"
	"github.com/kubectl-ray/kubectl-ray/pkg/junit"
)

// WriteJUnit writes one testcase per SLO check, so CI shows which SLO broke.
func WriteJUnit(w io.Writer, r *Report) error {
	suite := junit.Suite{
		Name: fmt.Sprintf("kubectl ray chaos head-kill %s/%s", r.Settings.Namespace, r.Settings.Cluster),
		Time: fmt.Sprintf("%.3f", r.Probe.ElapsedMs/1000),
	}
	summary := fmt.Sprintf("requests %d, errors %d, availability %.3f%%, by status %s",
		r.Totals.Requests, r.Totals.Errors, r.Totals.Availability, availability.Counts(r.Totals.ByStatus))
	for _, c := range r.Verdict.Checks {
		tc := junit.Case{Name: c.Name, Classname: "head-kill.slo", SystemOut: summary}
		if !c.Passed {
			typ := "SLOViolated"
			if c.Name == "warm-up" {
				typ = "WarmupFailed" // no SLO was measured: nothing was killed
			}
			tc.Failure = &junit.Failure{Message: c.Message, Type: typ, Text: summary}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	return junit.Write(w, junit.Report{Suites: []junit.Suite{suite}})
}
