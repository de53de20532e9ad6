package kube

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// This package talks to the API and knows no rule (the one loader): it may build on the
// packages of plain facts (errors, Ray's labels and pod facts, Ray's dashboard API) and on
// nothing of this module above them. pkg/load is where the API meets the rules.
func TestKnowsNoRule(t *testing.T) {
	const module = "github.com/kubectl-ray/kubectl-ray/"
	allowed := map[string]bool{module + "pkg/fault": true, module + "pkg/ray": true, module + "pkg/rayapi": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, module) && !allowed[path] {
				t.Errorf("%s imports %s: the API layer must not know rules or commands (move the code to pkg/load)", f, path)
			}
		}
	}
}
