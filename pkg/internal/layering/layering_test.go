package layering

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const (
	module = "github.com/kubectl-ray/kubectl-ray/"
	rules  = "pkg/diagnose"
)

// imp is one import of this module's in a non-test file.
type imp struct {
	file string // relative to the module root
	pkg  string // the importing package's directory, e.g. pkg/cmd/doctor
	path string // the imported package's directory, e.g. pkg/diagnose
}

// moduleImports are the imports of this module's packages by every non-test .go file under pkg/
// and cmd/, parsed (not built, so every build tag counts).
func moduleImports(t *testing.T) []imp {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var out []imp
	for _, top := range []string{"pkg", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), p, src, parser.ImportsOnly)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			for _, i := range parsed.Imports {
				path, _ := strconv.Unquote(i.Path.Value)
				if strings.HasPrefix(path, module) {
					out = append(out, imp{file: rel, pkg: filepath.ToSlash(filepath.Dir(rel)), path: strings.TrimPrefix(path, module)})
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) == 0 {
		t.Fatal("no imports found: is the module root three directories up?")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].file+out[i].path < out[j].file+out[j].path })
	return out
}

// under reports whether package pkg is dir or below it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// The API layer talks to the API server and knows no rule: it builds on the packages of plain
// facts (errors, Ray's and KubeRay's vocabulary, Ray's dashboard API) and on nothing of this
// module above them. pkg/load is where the API meets the snapshot.
func TestKubeImportsOnlyFacts(t *testing.T) {
	allowed := map[string]bool{"pkg/fault": true, "pkg/ray": true, "pkg/rayapi": true}
	for _, i := range moduleImports(t) {
		if i.pkg == "pkg/kube" && !allowed[i.path] {
			t.Errorf("%s imports %s: the API layer may import only pkg/fault, pkg/ray and pkg/rayapi; move the code that needs %s to pkg/load", i.file, i.path, i.path)
		}
	}
}

// ruleUsers are the packages that run doctor's rules or act on, render or mark their findings,
// and so may import them.
var ruleUsers = map[string]string{
	"pkg/cmd/doctor":  "runs the rules and prints their report",
	"pkg/cmd/heal":    "runs the rules, and acts on their findings",
	"pkg/cmd/bundle":  "runs the rules on the snapshot it keeps, and writes their report into the bundle",
	"pkg/cmd/chaos":   "runs the rules for head-kill's advice and hands the experiments what they say, as data",
	"pkg/doctorprint": "renders the rules' report in every -o format",
	"pkg/bundle":      "keeps the objects of the clusters doctor checks for a target (diagnose.Checked) and the Events the rules read (KeepEvent, KeepWarning)",
	"pkg/repair":      "plans heal's actions from findings",
	"pkg/watchdog":    "runs the rules on each snapshot heal's watchdog takes",
	"pkg/metrics":     "renders findings and cluster health as metrics",
	"pkg/accept":      "marks the findings an accept file accepts, and recomputes health without them",
	"pkg/manifest":    "emits findings of its own about the documents it decodes (doctor -f)",
}

// doctor's rules are imported only by what runs them or uses their findings (ruleUsers), so that
// the snapshot, its loaders, the API layer and the plumbing of the commands stay free of them.
// pkg/chaos is judged by TestChaosKnowsNoRule.
func TestRulesImportedOnlyByTheirUsers(t *testing.T) {
	for _, i := range moduleImports(t) {
		if i.path != rules || under(i.pkg, rules) || under(i.pkg, "pkg/chaos") {
			continue
		}
		if _, ok := ruleUsers[i.pkg]; !ok {
			t.Errorf("%s imports %s: only the packages that run the rules or use their findings may (ruleUsers); "+
				"take what it needs from pkg/state (the snapshot, Ref) or pkg/ray (KubeRay's names), or add %s to ruleUsers with why", i.file, i.path, i.pkg)
		}
	}
}

// The packages below the rules, which the rules and the commands build on, import no rule.
func TestNoRuleBelowTheRules(t *testing.T) {
	below := []string{"pkg/state", "pkg/load", "pkg/ray", "pkg/rayapi", "pkg/kube", "pkg/fault", "pkg/redact", "pkg/artifact", "pkg/evidence", "pkg/cmdutil", "pkg/flagname"}
	for _, i := range moduleImports(t) {
		if i.path != rules {
			continue
		}
		for _, b := range below {
			if i.pkg == b {
				t.Errorf("%s imports %s: %s sits below the rules; move what it uses into pkg/state or pkg/ray, or the code that needs the rules up into a command", i.file, i.path, b)
			}
		}
	}
}

// The experiments read the cluster and Ray's facts, never doctor's rules: an experiment must not
// depend on what doctor happens to judge. What doctor says about a target (head-kill's advice,
// the rule drain names) reaches an experiment as data from its command (pkg/cmd/chaos).
func TestChaosKnowsNoRule(t *testing.T) {
	for _, i := range moduleImports(t) {
		if i.path == rules && under(i.pkg, "pkg/chaos") {
			t.Errorf("%s imports %s: an experiment knows no rule; take KubeRay's names and facts from pkg/ray, and have the command (pkg/cmd/chaos) hand it what doctor says", i.file, i.path)
		}
	}
}

// A command (pkg/cmd/<name>) is thin, and shares with another only what lives below both: no
// command imports another (pkg/cmd, the root, imports every command).
func TestCommandsImportNoCommand(t *testing.T) {
	for _, i := range moduleImports(t) {
		if under(i.pkg, "pkg/cmd") && i.pkg != "pkg/cmd" && under(i.path, "pkg/cmd") && i.path != "pkg/cmd" && !under(i.path, i.pkg) && !under(i.pkg, i.path) {
			t.Errorf("%s imports %s: a command imports no other command; move what both need into a package below them (pkg/cmdutil, or a package of its own)", i.file, i.path)
		}
	}
}
