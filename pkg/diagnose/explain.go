package diagnose

import (
	_ "embed" // the rule pages
	"strings"
)

// rulesPage is docs/rules.md, carried in the binary so `kubectl ray doctor explain` works where
// the repository is not (a krew install). `make docs` copies it here; a test keeps the two equal.
//
//go:embed rules.md
var rulesPage string

// RuleDoc is the section of docs/rules.md about rule id, from its "## `id`" heading to the next
// heading of the same level.
func RuleDoc(id string) (string, bool) {
	start := strings.Index(rulesPage, "\n## `"+id+"` ")
	if start < 0 {
		return "", false
	}
	section := rulesPage[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end+1]
	}
	return strings.TrimRight(section, "\n") + "\n", true
}
