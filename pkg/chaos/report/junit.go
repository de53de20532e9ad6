package report

import (
	"encoding/xml"
	"fmt"
	"io"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes one testcase per SLO check, so CI shows which SLO broke.
func WriteJUnit(w io.Writer, r *Report) error {
	suite := junitSuite{
		Name:  fmt.Sprintf("kubectl ray chaos head-kill %s/%s", r.Settings.Namespace, r.Settings.Cluster),
		Tests: len(r.Verdict.Checks),
		Time:  fmt.Sprintf("%.3f", r.Probe.ElapsedMs/1000),
	}
	summary := fmt.Sprintf("requests %d, errors %d, availability %.3f%%, by status %s",
		r.Totals.Requests, r.Totals.Errors, r.Totals.Availability, kv(r.Totals.ByStatus))
	for _, c := range r.Verdict.Checks {
		tc := junitCase{Name: c.Name, ClassName: "head-kill.slo", SystemOut: summary}
		if !c.Passed {
			suite.Failures++
			tc.Failure = &junitFailure{Message: c.Message, Type: "SLOViolated", Text: summary}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	return writeJUnit(w, suite)
}

// WritePressureJUnit writes one testcase: whether the cluster came back (with --watch-eviction),
// else that the container was injected.
func WritePressureJUnit(w io.Writer, r *PressureReport) error {
	s := r.Settings
	suite := junitSuite{Name: fmt.Sprintf("kubectl ray chaos %s %s/%s", s.Experiment, s.Namespace, s.Target), Tests: 1, Time: "0.000"}
	if n := len(r.Events); n > 0 {
		suite.Time = fmt.Sprintf("%.3f", r.Events[n-1].AtMs/1000)
	}
	name := "recovery"
	if !s.WatchEviction {
		name = "injected"
	}
	tc := junitCase{Name: name, ClassName: s.Experiment, SystemOut: r.Verdict.Message}
	if !r.Verdict.Passed {
		suite.Failures++
		tc.Failure = &junitFailure{Message: r.Verdict.Message, Type: r.Verdict.Outcome, Text: r.Verdict.Message}
	}
	suite.Cases = []junitCase{tc}
	return writeJUnit(w, suite)
}

func writeJUnit(w io.Writer, suite junitSuite) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{suite}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
