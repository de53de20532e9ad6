package junit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The chaos head-kill report's shape (no totals, a time per suite) writes exactly the file the
// chaos report's own golden test holds.
func TestChaosShape(t *testing.T) {
	out := "requests 100, errors 12, availability 88.000%, by status 200=88 502=8 503=1"
	r := Report{Suites: []Suite{{
		Name: "kubectl ray chaos head-kill serve/rayservice/demo", Time: "10.002",
		Cases: []Case{
			{Name: "max-errors", Classname: "head-kill.slo", SystemOut: out,
				Failure: &Failure{Message: "12 errors, at most 5 allowed", Type: "SLOViolated", Text: out}},
			{Name: "min-availability", Classname: "head-kill.slo", SystemOut: out},
		},
	}}}
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "chaos", "headkill", "testdata", "headkill.junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// doctor's shape: totals, skipped counts, a timestamp, skipped cases and escaping.
func TestCountsShape(t *testing.T) {
	r := Report{Name: "kubectl ray doctor", Counts: true, Suites: []Suite{
		{Name: "a", Timestamp: "2025-06-01T12:00:00Z", Cases: []Case{
			{Name: "r1", Classname: "a", Failure: &Failure{Message: "error <x>", Type: "error", Text: "error <x> & more"}},
			{Name: "r2", Classname: "a", Skipped: &Skipped{Message: "could not see nodes"}},
			{Name: "r3", Classname: "a", SystemOut: "info y"},
		}},
		{Name: "b", Timestamp: "2025-06-01T12:00:00Z"},
	}}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="kubectl ray doctor" tests="3" failures="1" skipped="1">
  <testsuite name="a" tests="3" failures="1" skipped="1" timestamp="2025-06-01T12:00:00Z">
    <testcase name="r1" classname="a">
      <failure message="error &lt;x&gt;" type="error">error &lt;x&gt; &amp; more</failure>
    </testcase>
    <testcase name="r2" classname="a">
      <skipped message="could not see nodes"></skipped>
    </testcase>
    <testcase name="r3" classname="a">
      <system-out>info y</system-out>
    </testcase>
  </testsuite>
  <testsuite name="b" tests="0" failures="0" skipped="0" timestamp="2025-06-01T12:00:00Z"></testsuite>
</testsuites>
`
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
