package pressure

import (
	"fmt"
	"io"

	"github.com/kubectl-ray/kubectl-ray/pkg/junit"
)

// WriteJUnit writes one testcase: whether the cluster came back (with --watch-eviction),
// else that the container was injected.
func WriteJUnit(w io.Writer, r *Report) error {
	s := r.Settings
	suite := junit.Suite{Name: fmt.Sprintf("kubectl ray chaos %s %s/%s", s.Experiment, s.Namespace, s.Target), Time: "0.000"}
	if n := len(r.Events); n > 0 {
		suite.Time = fmt.Sprintf("%.3f", r.Events[n-1].AtMs/1000)
	}
	name := "recovery"
	if !s.WatchEviction {
		name = "injected"
	}
	tc := junit.Case{Name: name, Classname: s.Experiment, SystemOut: r.Verdict.Message}
	if !r.Verdict.Passed {
		tc.Failure = &junit.Failure{Message: r.Verdict.Message, Type: r.Verdict.Outcome, Text: r.Verdict.Message}
	}
	suite.Cases = []junit.Case{tc}
	return junit.Write(w, junit.Report{Suites: []junit.Suite{suite}})
}
