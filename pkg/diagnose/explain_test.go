package diagnose

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The page the binary carries is docs/rules.md, byte for byte (`make docs` copies it).
func TestEmbeddedRulesPageIsDocsRules(t *testing.T) {
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(docs) != rulesPage {
		t.Error("pkg/diagnose/rules.md differs from docs/rules.md: run make docs")
	}
}

// Every rule has its section, and a section is one rule's only.
func TestRuleDoc(t *testing.T) {
	for _, r := range Catalog {
		doc, ok := RuleDoc(r.ID)
		if !ok {
			t.Errorf("%s: no section in docs/rules.md", r.ID)
			continue
		}
		if !strings.HasPrefix(doc, "## `"+r.ID+"` ("+string(r.Severity)+")\n") || strings.Count(doc, "\n## ") != 0 {
			t.Errorf("%s: section starts %q", r.ID, strings.SplitN(doc, "\n", 2)[0])
		}
	}
	if _, ok := RuleDoc("head-evict"); ok {
		t.Error("a prefix of a rule ID found a section")
	}
}
