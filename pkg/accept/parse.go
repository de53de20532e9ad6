package accept

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// ParseError is a malformed accept file: one line, "file:line: problem; fix".
type ParseError struct {
	Pos Pos
	Msg string
}

func (e *ParseError) Error() string {
	if e.Pos.Line == 0 {
		return e.Pos.File + ": " + e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// The example every "how to write it" hint points at.
const exampleEntry = "e.g. - {rules: [head-crashloop], cluster: ml/train-*, reason: ..., expires: 2026-12-31}"

// Parse reads one accept file. name is used in errors and in Entry.Pos. It rejects anything it
// does not understand (unknown fields, kinds, rules, bad globs or dates) rather than guess: a
// typo must never silently accept more than was meant.
func Parse(name string, data []byte) (*Set, error) {
	p := &parser{file: name, set: &Set{Files: []string{name}, Thresholds: map[string]Threshold{}}}
	if err := p.parse(data); err != nil {
		return nil, err
	}
	return p.set, nil
}

type parser struct {
	file string
	set  *Set
}

func (p *parser) errorf(n *yaml.Node, format string, a ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &ParseError{Pos: Pos{p.file, line}, Msg: fmt.Sprintf(format, a...)}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (p *parser) parse(data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := strings.SplitN(err.Error(), "\n", 2)[0]
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return &ParseError{Pos: Pos{p.file, line}, Msg: "not valid YAML: " + m[2]}
		}
		return &ParseError{Pos: Pos{p.file, 0}, Msg: "not valid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return &ParseError{Pos: Pos{p.file, 0}, Msg: "empty; an accept file starts with apiVersion: " + APIVersion + " and kind: " + Kind}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return p.errorf(root, "an accept file is a mapping with apiVersion, kind, thresholds and accept")
	}
	fields, err := p.fields(root, "", "apiVersion", "kind", "thresholds", "accept")
	if err != nil {
		return err
	}
	av, kind := fields["apiVersion"], fields["kind"]
	switch {
	case av == nil:
		return p.errorf(root, "no apiVersion; start the file with apiVersion: %s", APIVersion)
	case av.Value != APIVersion:
		return p.errorf(av, "apiVersion %q is not supported; use apiVersion: %s", av.Value, APIVersion)
	case kind == nil:
		return p.errorf(root, "no kind; add kind: %s", Kind)
	case kind.Value != Kind:
		return p.errorf(kind, "kind %q is not an accept file; use kind: %s", kind.Value, Kind)
	}
	if th := fields["thresholds"]; th != nil {
		if err := p.thresholds(th); err != nil {
			return err
		}
	}
	if acc := fields["accept"]; acc != nil {
		if acc.Kind != yaml.SequenceNode {
			return p.errorf(acc, "accept is a list of entries, %s", exampleEntry)
		}
		for _, n := range acc.Content {
			e, err := p.entry(n)
			if err != nil {
				return err
			}
			p.set.Entries = append(p.set.Entries, e)
		}
	}
	return nil
}

// fields returns the values of mapping n by key, rejecting unknown and repeated keys.
func (p *parser) fields(n *yaml.Node, where string, known ...string) (map[string]*yaml.Node, error) {
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !contains(known, k.Value) {
			return nil, p.errorf(k, "unknown field %q%s; the fields are %s", k.Value, where, strings.Join(known, ", "))
		}
		if out[k.Value] != nil {
			return nil, p.errorf(k, "%s is set twice%s; keep one", k.Value, where)
		}
		out[k.Value] = v
	}
	return out, nil
}

func (p *parser) entry(n *yaml.Node) (Entry, error) {
	e := Entry{Pos: Pos{p.file, n.Line}}
	if n.Kind != yaml.MappingNode {
		return e, p.errorf(n, "an entry is a mapping with rules, cluster or operator, reason and expires, %s", exampleEntry)
	}
	f, err := p.fields(n, " in an accept entry", "rules", "cluster", "operator", "rayJob", "rayService", "file", "reason", "expires")
	if err != nil {
		return e, err
	}
	rules := f["rules"]
	if rules == nil || rules.Kind != yaml.SequenceNode || len(rules.Content) == 0 {
		return e, p.errorf(orNode(rules, n), "an entry needs rules, a list of rule IDs (docs/rules.md), %s", exampleEntry)
	}
	if set := nonNil(f["cluster"], f["operator"], f["rayJob"], f["rayService"], f["file"]); len(set) > 1 {
		return e, p.errorf(set[1], "an entry matches a cluster, the operator, a RayJob, a RayService or a file, only one of them; split it in several entries")
	}
	switch {
	case f["file"] != nil:
		if e.File, err = p.fileGlob(f["file"]); err != nil {
			return e, err
		}
	case f["rayService"] != nil:
		if e.RayService, err = p.glob(f["rayService"], "rayService", "serve/web-*"); err != nil {
			return e, err
		}
	case f["rayJob"] != nil:
		if e.RayJob, err = p.glob(f["rayJob"], "rayJob", "ml/nightly-*"); err != nil {
			return e, err
		}
	case f["cluster"] != nil:
		if e.Cluster, err = p.glob(f["cluster"], "cluster", "ml/train-*"); err != nil {
			return e, err
		}
	case f["operator"] != nil:
		if e.Operator, err = p.glob(f["operator"], "operator", "kuberay-system/kuberay-operator"); err != nil {
			return e, err
		}
	default:
		return e, p.errorf(n, "an entry needs cluster: NAMESPACE/NAME (globs allowed, e.g. ml/train-*), operator: NAMESPACE/NAME, rayJob: NAMESPACE/NAME, rayService: NAMESPACE/NAME or file: PATH (doctor -f)")
	}
	for _, r := range rules.Content {
		info, ok := catalogRule(r.Value)
		if r.Kind != yaml.ScalarNode || !ok {
			return e, p.errorf(r, "unknown rule %q; rule IDs are listed in docs/rules.md (e.g. head-crashloop)", r.Value)
		}
		kind, _ := e.Pattern()
		if kind == "file" {
			if info.Scope != "spec" && info.Scope != "manifest" {
				return e, p.errorf(r, "rule %s is not about a spec: a file: entry accepts the rules doctor -f runs (docs/rules.md, scopes spec and manifest)", r.Value)
			}
			e.Rules = append(e.Rules, r.Value)
			continue
		}
		switch want := scopeKey(info.Scope); {
		case want != kind && want == "operator":
			return e, p.errorf(r, "rule %s is about the KubeRay operator: match it with operator: NAMESPACE/NAME, not %s", r.Value, kind)
		case want != kind && want == "rayJob":
			return e, p.errorf(r, "rule %s is about a RayJob: match it with rayJob: NAMESPACE/NAME, not %s", r.Value, kind)
		case want != kind && want == "rayService":
			return e, p.errorf(r, "rule %s is about a RayService itself: match it with rayService: NAMESPACE/NAME, not %s", r.Value, kind)
		case want != kind:
			return e, p.errorf(r, "rule %s is about a RayCluster: match it with cluster: NAMESPACE/NAME, not %s", r.Value, kind)
		}
		e.Rules = append(e.Rules, r.Value)
	}
	reason := f["reason"]
	if reason == nil || reason.Kind != yaml.ScalarNode || strings.TrimSpace(reason.Value) == "" {
		return e, p.errorf(orNode(reason, n), "an entry needs a reason: why the finding is accepted, and who will fix it")
	}
	e.Reason = strings.TrimSpace(reason.Value)
	exp := f["expires"]
	if exp == nil || exp.Kind != yaml.ScalarNode || exp.Value == "" {
		return e, p.errorf(orNode(exp, n), "an entry needs expires: a date (YYYY-MM-DD) after which it stops accepting")
	}
	if e.Expires, err = parseExpires(exp.Value); err != nil {
		return e, p.errorf(exp, "expires %q is not a date; write YYYY-MM-DD (e.g. 2026-12-31) or an RFC 3339 time", exp.Value)
	}
	e.ExpiresText = exp.Value
	return e, nil
}

// scopeKey is the entry key that matches rules of scope: operator, rayJob, rayService or cluster.
func scopeKey(scope string) string {
	switch scope {
	case "operator":
		return "operator"
	case "rayjob":
		return "rayJob"
	case "rayservice-object":
		return "rayService"
	}
	return "cluster"
}

func nonNil(ns ...*yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	for _, n := range ns {
		if n != nil {
			out = append(out, n)
		}
	}
	return out
}

// fileGlob checks a file: pattern, a path as doctor -f was given it (globs: * ? [a-z], never
// across a slash).
func (p *parser) fileGlob(n *yaml.Node) (string, error) {
	v := n.Value
	if n.Kind != yaml.ScalarNode || v == "" {
		return "", p.errorf(n, "file is a path as given to doctor -f; write e.g. file: manifests/ray-*.yaml")
	}
	if _, err := path.Match(v, ""); errors.Is(err, path.ErrBadPattern) {
		return "", p.errorf(n, "file %q is not a valid glob (unclosed [ or a trailing \\); e.g. file: manifests/ray-*.yaml", v)
	}
	return path.Clean(v), nil
}

// glob checks a "namespace/name" pattern: both parts present, valid path.Match syntax.
func (p *parser) glob(n *yaml.Node, field, example string) (string, error) {
	v := n.Value
	ns, name, ok := strings.Cut(v, "/")
	if n.Kind != yaml.ScalarNode || !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", p.errorf(n, "%s %q is not NAMESPACE/NAME; write e.g. %s: %s (globs: * ? [a-z]; */NAME for any namespace)", field, v, field, example)
	}
	if _, err := path.Match(v, ""); errors.Is(err, path.ErrBadPattern) {
		return "", p.errorf(n, "%s %q is not a valid glob (unclosed [ or a trailing \\); e.g. %s: %s", field, v, field, example)
	}
	return v, nil
}

func (p *parser) thresholds(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return p.errorf(n, "thresholds is a mapping, e.g. thresholds: {pendingTooLong: 10m}")
	}
	var keys []string
	for _, t := range ThresholdTable {
		keys = append(keys, t.Key)
	}
	f, err := p.fields(n, " in thresholds", keys...)
	if err != nil {
		return err
	}
	for _, t := range ThresholdTable {
		v := f[t.Key]
		if v == nil {
			continue
		}
		d, err := ParseThreshold(v.Value)
		if err != nil {
			return p.errorf(v, "thresholds.%s: %v", t.Key, err)
		}
		p.set.Thresholds[t.Key] = Threshold{Value: d, Pos: Pos{p.file, v.Line}}
	}
	return nil
}

// parseExpires reads a date (the entry stops accepting at 00:00 UTC that day) or an RFC 3339 time.
func parseExpires(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}

func catalogRule(id string) (diagnose.RuleInfo, bool) {
	for _, r := range diagnose.Catalog {
		if r.ID == id {
			return r, true
		}
	}
	return diagnose.RuleInfo{}, false
}

func orNode(n, parent *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return parent
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
