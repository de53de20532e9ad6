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
