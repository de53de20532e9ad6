package redact

import (
	"bytes"
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// A command line is read as one argv: Kubernetes' command and args lists together, so that a
// flag and its value in two elements (["--redis-password", "V"], ["--token", "V"]) are seen
// together, and an element that is itself a shell command line (bash -lc "ray start
// --redis_password=V && ...") is parsed as the shell would parse it. A flag is secret when its
// name is (IsSecretName: --redis-password, --redis_password, --password, --token, --api-key,
// --access-key, --requirepass, ...), written with = or with a space, quoted or not.

// runtimeEnvFlags take a runtime environment as JSON (ray job submit --runtime-env-json), which
// is read by its structure.
var runtimeEnvFlags = map[string]bool{"--runtime-env-json": true}

// argvValues calls found with every secret value argv holds; whole reports whether the value is
// all of element i (a flag's value in the next element) or a part of it.
func argvValues(argv []string, depth int, found func(i int, value string, whole bool)) {
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if strings.HasPrefix(a, "-") || a == "requirepass" {
			name, val, eq := strings.Cut(a, "=")
			secret := IsSecretName(name) || (name == "-a" && path.Base(argv[0]) == "redis-cli")
			switch {
			case runtimeEnvFlags[name]:
				if !eq && i+1 < len(argv) {
					i++
					val = argv[i]
				}
				var vals []string
				if embeddedValues(val, func(v string) { vals = append(vals, v) }) == nil {
					for _, v := range vals {
						found(i, v, false)
					}
				}
				continue
			case secret && eq:
				if val != "" {
					found(i, val, false)
				}
				continue
			case secret && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-"):
				found(i+1, argv[i+1], true)
				i++
				continue
			}
		}
		if depth < 4 && strings.ContainsAny(a, " \t\n;&|") {
			for _, v := range commandLineValues(a, depth+1) {
				found(i, v, false)
			}
		}
	}
}

// AddArgv adds the secret values of a command line given as a list (command and args).
func (set Set) AddArgv(argv []string) {
	argvValues(argv, 0, func(_ int, v string, _ bool) { set.Add(v) })
	for _, a := range argv {
		set.AddText(a)
	}
}

// AddCommandLine adds the secret values of a command line given as one string (a RayJob's
// entrypoint, a shell's -c).
func (set Set) AddCommandLine(s string) {
	for _, v := range commandLineValues(s, 0) {
		set.Add(v)
	}
	set.AddText(s)
}

// RedactArgv is argv with every secret value redacted: a flag's value in its own element
// wholly, a value within an element in place, then every shape.
func RedactArgv(argv []string, found Set) []string {
	out := append([]string(nil), argv...)
	argvValues(argv, 0, func(i int, v string, whole bool) {
		found.Add(v)
		if whole {
			out[i] = Redacted
		} else {
			out[i] = strings.ReplaceAll(out[i], v, Redacted)
		}
	})
	for i := range out {
		found.AddText(out[i])
		out[i] = replaceSpans(out[i], shapeSpans(out[i]))
	}
	return out
}

// RedactCommandLine is a command line with its secret values redacted (added to found).
func RedactCommandLine(s string, found Set) string {
	for _, v := range commandLineValues(s, 0) {
		found.Add(v)
		s = strings.ReplaceAll(s, v, Redacted)
	}
	found.AddText(s)
	return replaceSpans(s, shapeSpans(s))
}

// commandLines remembers what parsing a command line found: the pods of a group share their
// command lines, and a fleet has thousands of pods.
var commandLines = struct {
	sync.Mutex
	seen map[string][]string
}{seen: map[string][]string{}}

const commandLinesKept = 4096

// commandLineValues are the secret values of a shell command line: the secret flags of every
// command in it (argvValues) and the values of assignments to secret names (API_KEY=V cmd,
// export TOKEN=V). What the shell cannot parse is split at spaces.
func commandLineValues(s string, depth int) []string {
	if !hasSecretWord(strings.ToLower(s)) {
		return nil
	}
	commandLines.Lock()
	vs, ok := commandLines.seen[s]
	commandLines.Unlock()
	if ok {
		return vs
	}
	vs = parseCommandLine(s, depth)
	commandLines.Lock()
	if len(commandLines.seen) >= commandLinesKept {
		commandLines.seen = map[string][]string{}
	}
	commandLines.seen[s] = vs
	commandLines.Unlock()
	return vs
}

func parseCommandLine(s string, depth int) []string {
	var vs []string
	add := func(_ int, v string, _ bool) { vs = append(vs, v) }
	file, err := syntax.NewParser(syntax.KeepComments(false)).Parse(strings.NewReader(s), "")
	if err != nil {
		argvValues(strings.Fields(s), depth, add)
		return vs
	}
	syntax.Walk(file, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CallExpr:
			for _, a := range x.Assigns {
				assignValue(a, add)
			}
			argv := make([]string, len(x.Args))
			for i, w := range x.Args {
				argv[i] = wordString(w)
			}
			argvValues(argv, depth, add)
		case *syntax.DeclClause:
			for _, a := range x.Args {
				assignValue(a, add)
			}
		}
		return true
	})
	return vs
}

func assignValue(a *syntax.Assign, found func(int, string, bool)) {
	if a.Name != nil && a.Value != nil && IsSecretName(a.Name.Value) {
		if v := wordString(a.Value); v != "" {
			found(0, v, true)
		}
	}
}

// wordString is a word as the command receives it, its quotes removed; an expansion is kept as
// written ($TOKEN), since its value is not in the text.
func wordString(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		wordPart(&b, p)
	}
	return b.String()
}

func wordPart(b *strings.Builder, p syntax.WordPart) {
	switch x := p.(type) {
	case *syntax.Lit:
		b.WriteString(x.Value)
	case *syntax.SglQuoted:
		b.WriteString(x.Value)
	case *syntax.DblQuoted:
		for _, q := range x.Parts {
			wordPart(b, q)
		}
	default:
		var buf bytes.Buffer
		if err := syntax.NewPrinter().Print(&buf, p); err == nil {
			b.Write(buf.Bytes())
		}
	}
}
