package doctor

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// JUnit, as CI systems read it: one testsuite per RayCluster and one for the operator, one
// testcase per rule. A rule whose findings reach --fail-on fails; findings below it are written
// to the testcase's system-out; a rule that could not run (blind, or not a RayService cluster)
// is skipped with the reason.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func writeJUnit(w io.Writer, r *diagnose.Report, threshold diagnose.Severity) error {
	doc := junitSuites{Name: "kubectl ray doctor"}
	byCluster := map[string][]diagnose.Finding{}
	for _, f := range r.Findings {
		k := f.Cluster.Namespace + "/" + f.Cluster.Name
		byCluster[k] = append(byCluster[k], f)
	}
	blind := map[string]string{}
	for _, g := range r.Blind {
		blind[g.Resource] = g.Reason
	}
	ts := r.Now.UTC().Format("2006-01-02T15:04:05Z")
	suite := func(name string, scopes []string, fs []diagnose.Finding, rayService bool) {
		s := junitSuite{Name: name, Timestamp: ts}
		for _, rule := range diagnose.Catalog {
			if !contains(scopes, rule.Scope) {
				continue
			}
			tc := junitCase{Name: rule.ID, Classname: name}
			var failing, other, accepted []string
			for _, f := range fs {
				if f.Rule != rule.ID {
					continue
				}
				line := fmt.Sprintf("%s %s/%s: %s\nfix: %s", f.Severity, strings.ToLower(f.Object.Kind), f.Object.Name, f.Message, f.Remedy)
				if f.Accepted != nil {
					accepted = append(accepted, acceptedNote(f.Accepted))
					other = append(other, line+"\n"+acceptedNote(f.Accepted))
				} else if threshold != "" && f.Severity.Rank() >= threshold.Rank() {
					failing = append(failing, line)
				} else {
					other = append(other, line)
				}
			}
			switch {
			case len(failing) > 0:
				tc.Failure = &junitFailure{Type: string(rule.Severity), Message: strings.SplitN(failing[0], "\n", 2)[0], Text: strings.Join(failing, "\n\n")}
				s.Failures++
			case len(accepted) > 0:
				// An accepted finding never fails the job; skipped is how CI shows "known, not checked".
				tc.Skipped = &junitSkipped{Message: strings.Join(accepted, "; ")}
				s.Skipped++
			case rule.Needs != "" && blind[rule.Needs] != "":
				tc.Skipped = &junitSkipped{Message: "could not see " + rule.Needs + ": " + blind[rule.Needs]}
				s.Skipped++
			case rule.Scope == "rayservice" && !rayService:
				tc.Skipped = &junitSkipped{Message: "applies to clusters of a RayService"}
				s.Skipped++
			}
			tc.SystemOut = strings.Join(other, "\n\n")
			s.Cases = append(s.Cases, tc)
		}
		s.Tests = len(s.Cases)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	suite("kuberay-operator", []string{"operator"}, byCluster["/"], false)
	for _, c := range r.Clusters {
		k := c.Namespace + "/" + c.Name
		suite(k, []string{"cluster", "rayservice"}, byCluster[k], c.Owner != nil && c.Owner.Kind == "RayService")
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

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
