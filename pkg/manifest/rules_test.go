package manifest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRuleFixtures reads each fixture under testdata/rules and requires exactly the findings its
// "# want: SEVERITY RULE" lines name (none for a fixture without one), each with its file and
// line; "# operator: vX.Y.Z" judges it against that KubeRay release, as a cluster running it would.
func TestRuleFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/rules/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			operator := "" // "# operator: vX.Y.Z": the KubeRay release a cluster would have said runs it
			for _, line := range strings.Split(string(data), "\n") {
				if w, ok := strings.CutPrefix(line, "# want: "); ok {
					want = append(want, w)
				}
				if v, ok := strings.CutPrefix(line, "# operator: "); ok {
					operator = v
				}
			}
			s := read(t, Input{Paths: []string{file}})
			s.Snapshot("default", time.Unix(0, 0))
			s.JudgeFields(operator)
			var got []string
			for _, f := range s.NoteFindings() {
				got = append(got, string(f.Severity)+" "+f.Rule)
				if f.Source == nil || f.Source.File != file || f.Source.Line < 2 {
					t.Errorf("%s: source %+v, want %s and the field's line", f.Rule, f.Source, file)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("findings:\n got %q\nwant %q", got, want)
			}
		})
	}
}
