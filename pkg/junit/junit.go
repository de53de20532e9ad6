// Package junit writes JUnit XML as CI systems read it. doctor writes one testcase per rule,
// chaos one per SLO check; both go through Write so the documents stay alike.
package junit

import (
	"encoding/xml"
	"io"
)

// Report is a <testsuites> document.
type Report struct {
	// Name is the name attribute of <testsuites>; "" writes none.
	Name string
	// Counts writes the tests, failures and skipped totals on <testsuites>, and the skipped
	// count on every <testsuite>; without it only each suite's tests and failures are written.
	Counts bool
	Suites []Suite
}

// Suite is a <testsuite>. Its tests, failures and skipped counts are counted from Cases.
type Suite struct {
	Name      string
	Timestamp string // ISO 8601; "" writes none
	Time      string // seconds, e.g. "12.345"; "" writes none
	Cases     []Case
}

// Case is a <testcase>: passed, failed (Failure) or skipped (Skipped).
type Case struct {
	Name      string
	Classname string
	Failure   *Failure
	Skipped   *Skipped
	SystemOut string // "" writes none
}

// Failure is why a case failed: Message is one line, Text the details.
type Failure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// Skipped is why a case did not run.
type Skipped struct {
	Message string `xml:"message,attr"`
}

// The XML shapes; the counts are pointers so that "not written" and "0" differ.
type xmlSuites struct {
	XMLName  xml.Name   `xml:"testsuites"`
	Name     string     `xml:"name,attr,omitempty"`
	Tests    *int       `xml:"tests,attr,omitempty"`
	Failures *int       `xml:"failures,attr,omitempty"`
	Skipped  *int       `xml:"skipped,attr,omitempty"`
	Suites   []xmlSuite `xml:"testsuite"`
}

type xmlSuite struct {
	Name      string    `xml:"name,attr"`
	Tests     int       `xml:"tests,attr"`
	Failures  int       `xml:"failures,attr"`
	Skipped   *int      `xml:"skipped,attr,omitempty"`
	Timestamp string    `xml:"timestamp,attr,omitempty"`
	Time      string    `xml:"time,attr,omitempty"`
	Cases     []xmlCase `xml:"testcase"`
}

type xmlCase struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Failure   *Failure `xml:"failure,omitempty"`
	Skipped   *Skipped `xml:"skipped,omitempty"`
	SystemOut string   `xml:"system-out,omitempty"`
}

// Write writes r as an indented XML document with its header and a final newline.
func Write(w io.Writer, r Report) error {
	doc := xmlSuites{Name: r.Name}
	var tests, failures, skipped int
	for _, s := range r.Suites {
		xs := xmlSuite{Name: s.Name, Tests: len(s.Cases), Timestamp: s.Timestamp, Time: s.Time}
		n := 0
		for _, c := range s.Cases {
			if c.Failure != nil {
				xs.Failures++
			}
			if c.Skipped != nil {
				n++
			}
			xs.Cases = append(xs.Cases, xmlCase(c))
		}
		if r.Counts {
			xs.Skipped = &n
		}
		tests, failures, skipped = tests+xs.Tests, failures+xs.Failures, skipped+n
		doc.Suites = append(doc.Suites, xs)
	}
	if r.Counts {
		doc.Tests, doc.Failures, doc.Skipped = &tests, &failures, &skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
