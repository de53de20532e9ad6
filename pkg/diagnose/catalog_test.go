package diagnose

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCatalogAgrees ties each rule's line in Catalog to its fixtures and its docs section: a
// rule without a fixture that fires it at its severity, without a section in docs/rules.md, with
// a section whose severity or anchor differs, or a section or fixture for a rule not in Catalog,
// fails here.
func TestCatalogAgrees(t *testing.T) {
	for _, p := range catalogProblems(Catalog, fixtureWants(t), docSections(t)) {
		t.Error(p)
	}
}

// The check itself must catch each kind of disagreement.
func TestCatalogProblemsCatches(t *testing.T) {
	rule := RuleInfo{"x-rule", SeverityError, "cluster", "", "x happens", "x-rule-error"}
	fired := map[string][]Severity{"x-rule": {SeverityError}}
	docs := map[string]docSection{"x-rule": {SeverityError, "x-rule-error"}}
	if p := catalogProblems([]RuleInfo{rule}, fired, docs); len(p) != 0 {
		t.Fatalf("agreeing rule reported: %q", p)
	}
	for name, tc := range map[string]struct {
		rule  RuleInfo
		fired map[string][]Severity
		docs  map[string]docSection
	}{
		"no fixture":         {rule, map[string][]Severity{}, docs},
		"fixture severity":   {rule, map[string][]Severity{"x-rule": {SeverityWarning}}, docs},
		"fixture extra rule": {rule, map[string][]Severity{"x-rule": {SeverityError}, "y": {SeverityInfo}}, docs},
		"no docs section":    {rule, fired, map[string]docSection{}},
		"docs severity":      {rule, fired, map[string]docSection{"x-rule": {SeverityWarning, "x-rule-warning"}}},
		"anchor":             {RuleInfo{"x-rule", SeverityError, "cluster", "", "x happens", "x-rule"}, fired, docs},
		"extra docs section": {rule, fired, map[string]docSection{"x-rule": {SeverityError, "x-rule-error"}, "y": {SeverityInfo, "y-info"}}},
		"no summary":         {RuleInfo{"x-rule", SeverityError, "cluster", "", "", "x-rule-error"}, fired, docs},
		"unknown scope":      {RuleInfo{"x-rule", SeverityError, "pod", "", "x happens", "x-rule-error"}, fired, docs},
	} {
		if p := catalogProblems([]RuleInfo{tc.rule}, tc.fired, tc.docs); len(p) == 0 {
			t.Errorf("%s: not reported", name)
		}
	}
}

type docSection struct {
	severity Severity
	anchor   string
}

func catalogProblems(catalog []RuleInfo, fired map[string][]Severity, docs map[string]docSection) []string {
	var out []string
	known := map[string]bool{}
	for _, r := range catalog {
		if known[r.ID] {
			out = append(out, fmt.Sprintf("rule %s is in Catalog twice", r.ID))
		}
		known[r.ID] = true
		if r.Summary == "" || strings.Contains(r.Summary, "\n") {
			out = append(out, fmt.Sprintf("rule %s: Summary must be one line", r.ID))
		}
		if r.Scope != "cluster" && r.Scope != "ray" && r.Scope != "rayservice" && r.Scope != "rayjob" && r.Scope != "rayservice-object" && r.Scope != "raycronjob" && r.Scope != "operator" && r.Scope != "spec" && r.Scope != "manifest" && r.Scope != "admission" {
			out = append(out, fmt.Sprintf("rule %s: unknown scope %q", r.ID, r.Scope))
		}
		sevs := fired[r.ID]
		if len(sevs) == 0 {
			out = append(out, fmt.Sprintf("rule %s has no fixture under testdata/rules that fires it (# want: %s %s)", r.ID, r.Severity, r.ID))
		}
		for _, s := range sevs {
			if s != r.Severity {
				out = append(out, fmt.Sprintf("rule %s: a fixture wants severity %s, Catalog says %s", r.ID, s, r.Severity))
			}
		}
		d, ok := docs[r.ID]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("docs/rules.md has no section \"## `%s` (%s)\"", r.ID, r.Severity))
		case d.severity != r.Severity:
			out = append(out, fmt.Sprintf("docs/rules.md says %s is %s, Catalog says %s", r.ID, d.severity, r.Severity))
		case d.anchor != r.Anchor:
			out = append(out, fmt.Sprintf("rule %s: Catalog anchor %q, docs/rules.md section is #%s", r.ID, r.Anchor, d.anchor))
		}
	}
	for id := range fired {
		if !known[id] {
			out = append(out, fmt.Sprintf("a fixture wants rule %s, which is not in Catalog", id))
		}
	}
	for id := range docs {
		if !known[id] {
			out = append(out, fmt.Sprintf("docs/rules.md has a section for rule %s, which is not in Catalog", id))
		}
	}
	return out
}

// fixtureWants reads every "# want: SEVERITY RULE" line of testdata/rules.
func fixtureWants(t *testing.T) map[string][]Severity {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "rules", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	// The rules about a document's text have theirs beside the reader that fires them.
	manifests, err := filepath.Glob(filepath.Join("..", "manifest", "testdata", "rules", "*.yaml"))
	if err != nil || len(manifests) == 0 {
		t.Fatalf("no manifest fixtures: %v", err)
	}
	files = append(files, manifests...)
	out := map[string][]Severity{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if w, ok := strings.CutPrefix(line, "# want: "); ok {
				f := strings.Fields(w)
				if len(f) != 2 {
					t.Fatalf("%s: bad want line %q", file, line)
				}
				out[f[1]] = append(out[f[1]], Severity(f[0]))
			}
		}
	}
	return out
}

// A rule's section is headed "## `ID` (severity)".
var ruleHeading = regexp.MustCompile("^## `([^`]+)` \\((\\w+)\\)\\s*$")

// docSections reads the rule sections of docs/rules.md and their GitHub anchors.
func docSections(t *testing.T) map[string]docSection {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]docSection{}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "## `") {
			m := ruleHeading.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("docs/rules.md: rule heading %q is not \"## `ID` (severity)\"", line)
			}
			out[m[1]] = docSection{Severity(m[2]), anchor(strings.TrimPrefix(line, "## "))}
		}
	}
	return out
}

// anchor is GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}
