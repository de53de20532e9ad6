package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/util/jsonpath"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Every shell command in docs/*.md and README.md parses as shell, and every kubectl -o jsonpath
// template in one parses as kubectl parses it after the shell has removed the quotes (an unquoted
// {range ...} is split by the shell; an unquoted {"\n"} loses its quotes).
func TestDocsCommandsParse(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("..", "..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "..", "..", "README.md"))
	commands, templates := 0, 0
	for _, page := range pages {
		md, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range CodeBlocks(string(md)) {
			for _, cmd := range ShellCommands(b) {
				where := fmt.Sprintf("%s:%d", filepath.Base(page), b.Line)
				commands++
				file, err := syntax.NewParser().Parse(strings.NewReader(cmd), where)
				if err != nil {
					t.Errorf("%s: does not parse as shell: %v\n%s", where, err, cmd)
					continue
				}
				for _, tmpl := range jsonpathTemplates(t, file) {
					templates++
					if err := jsonpath.New(where).Parse(tmpl); err != nil {
						t.Errorf("%s: kubectl would say: error parsing jsonpath %s, %v\n%s", where, tmpl, err, cmd)
					}
				}
			}
		}
	}
	if commands < 20 || templates < 3 {
		t.Errorf("found %d commands and %d jsonpath templates: the extraction no longer finds the docs' commands", commands, templates)
	}
}

// The extraction keeps what a reader pastes and leaves output, synopses and YAML out.
func TestShellCommands(t *testing.T) {
	md := "```\nkubectl ray heal [NAME | -n NS | -A]\n```\n" +
		"```\n$ kubectl get pods \\\n  -n ml\nNAME   READY\n$ echo hi\n```\n" +
		"```\nmake build        # comment\nerror: forbidden\n```\n" +
		"```yaml\nkind: Pod\n```\n" +
		"```sh\nX=1\necho $X\n```\n"
	var got []string
	for _, b := range CodeBlocks(md) {
		got = append(got, ShellCommands(b)...)
	}
	want := []string{"kubectl get pods \\\n  -n ml", "echo hi", "make build        # comment", "X=1\necho $X"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// jsonpathTemplates returns the templates of the kubectl commands' -o jsonpath=... arguments, as
// kubectl receives them (quotes removed by the shell).
func jsonpathTemplates(t *testing.T, file *syntax.File) []string {
	var out []string
	syntax.Walk(file, func(node syntax.Node) bool {
		call, ok := node.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 || call.Args[0].Lit() != "kubectl" {
			return true
		}
		var args []string
		for _, w := range call.Args {
			s, err := expand.Literal(nil, w)
			if err != nil {
				t.Errorf("expanding %v: %v", w.Lit(), err)
				return true
			}
			args = append(args, s)
		}
		for i, a := range args {
			format := ""
			switch {
			case (a == "-o" || a == "--output") && i+1 < len(args):
				format = args[i+1]
			case strings.HasPrefix(a, "--output="):
				format = strings.TrimPrefix(a, "--output=")
			case strings.HasPrefix(a, "-o"):
				format = strings.TrimPrefix(strings.TrimPrefix(a, "-o"), "=")
			}
			for _, kind := range []string{"jsonpath=", "jsonpath-as-json="} {
				if tmpl, ok := strings.CutPrefix(format, kind); ok {
					out = append(out, tmpl)
				}
			}
		}
		return true
	})
	return out
}
