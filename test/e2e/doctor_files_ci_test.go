package e2e

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// doctor -f as a CI job runs it (docs/ci.md), offline, in every format and with the flags a
// pipeline sets: -o junit and -o yaml carry the same findings as -o json, each with its file and
// line; --min-severity warning drops the info advice; --fail-on warning fails on a warning the
// default passes; an accept entry naming the file accepts it, and the job passes again. The
// document is fieldDroppedDocs' v1alpha1 RayCluster, whose dropped field is judged with no
// cluster (field-dropped, warning) beside the head's eviction risk (head-evictable-first, info).
// About 0.5 s: no cluster is asked.
func TestDoctorManifestCIFlags(t *testing.T) {
	t.Parallel()
	h := NewH(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "old-api.yaml")
	if err := os.WriteFile(file, []byte(fieldDroppedDocs[2]), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) Result {
		return h.Run(append([]string{"doctor", "-f", file, "--offline"}, args...)...)
	}

	js := run("-o", "json")
	var d drDoc
	if err := json.Unmarshal([]byte(js.Stdout), &d); err != nil || js.Code != 0 {
		t.Fatalf("-o json: exit %d, %v\n%s", js.Code, err, js)
	}
	if got := strings.Join(d.ruleIDs(), " "); got != "field-dropped head-evictable-first" {
		t.Fatalf("-o json: rules %q, want field-dropped and head-evictable-first\n%s", got, js)
	}

	yml := run("-o", "yaml")
	var y struct {
		Kind     string
		Findings []struct {
			Rule, Field string
			Source      struct {
				File string
				Line int
			}
		}
	}
	if err := yaml.Unmarshal([]byte(yml.Stdout), &y); err != nil || yml.Code != 0 || y.Kind != "DoctorReport" || len(y.Findings) != 2 {
		t.Fatalf("-o yaml: exit %d, %v, %+v\n%s", yml.Code, err, y, yml)
	}
	for _, f := range y.Findings {
		if f.Rule == "field-dropped" && (f.Field != "spec.workerGroupSpecs[0].suspend" || f.Source.File != file || f.Source.Line != 15) {
			t.Errorf("-o yaml: field-dropped at %s:%d %s, want %s:15 spec.workerGroupSpecs[0].suspend", f.Source.File, f.Source.Line, f.Field, file)
		}
	}

	ju := run("-o", "junit", "--fail-on", "warning")
	var suites struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(ju.Stdout), &suites); err != nil || ju.Code != 1 {
		t.Fatalf("-o junit --fail-on warning: exit %d (want 1), %v\n%s", ju.Code, err, ju)
	}
	var failed []string
	for _, s := range suites.Suites {
		for _, c := range s.Cases {
			if c.Failure != nil {
				failed = append(failed, c.Name)
				wantContains(t, "junit failure", c.Failure.Message, "ray.io/v1alpha1's RayCluster schema has no field spec.workerGroupSpecs[0].suspend")
			}
		}
	}
	if strings.Join(failed, " ") != "field-dropped" || suites.Failures != 1 {
		t.Errorf("-o junit --fail-on warning: failed testcases %q (%d), want field-dropped alone\n%s", failed, suites.Failures, ju)
	}

	ms := run("-o", "json", "--min-severity", "warning")
	d = drDoc{}
	if err := json.Unmarshal([]byte(ms.Stdout), &d); err != nil || strings.Join(d.ruleIDs(), " ") != "field-dropped" {
		t.Errorf("--min-severity warning: rules %q (%v), want field-dropped alone\n%s", d.ruleIDs(), err, ms)
	}

	accept := filepath.Join(dir, "accept.yaml")
	entry := "apiVersion: kubectl-ray.io/v1alpha1\nkind: AcceptedFindings\naccept:\n- rules: [field-dropped]\n  file: " +
		filepath.Join(dir, "old-*.yaml") + "\n  reason: the v1 move lands with the chart's next release (TICKET-3)\n  expires: 2999-01-01\n"
	if err := os.WriteFile(accept, []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	acc := run("--fail-on", "warning", "--accept", accept)
	if acc.Code != 0 || !strings.Contains(acc.Stdout, "accepted, expires 2999-01-01 ("+accept+":4): the v1 move lands with the chart's next release (TICKET-3)") {
		t.Errorf("--accept with a file entry: exit %d (want 0), want the finding marked accepted\n%s", acc.Code, acc)
	}
}

// ruleIDs are the rules of every finding, sorted as the report lists them.
func (d drDoc) ruleIDs() []string {
	var out []string
	for _, f := range d.Findings {
		out = append(out, f.Rule)
	}
	return out
}
