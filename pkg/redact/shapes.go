package redact

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
	"sync"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// A shape is a secret recognised in free text by how it is written: the regular expression finds
// a candidate, nameGroup (when not 0) must be a secret-sounding name, valueGroup is what is
// redacted. need is a cheap test on the lower-cased text that every match must pass, so that
// the expressions run only on the few strings that can match (every pod's command line and
// every log line comes through here).
type shape struct {
	re         *regexp.Regexp
	nameGroup  int
	valueGroup int
	need       func(lower string) bool // nil: the text must hold a secret word (hasSecretWord)
}

// quoted or bare: a value in double quotes, single quotes, or up to a delimiter.
const valueRE = `("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s"'&;,}\])]+)`

var shapes = []shape{
	// A URI's password: redis://:PASS@host, https://user:PASS@pypi.internal/simple.
	{re: regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s"']*:([^@\s"']+)@`), valueGroup: 1,
		need: func(l string) bool { return strings.Contains(l, "://") && strings.Contains(l, "@") }},
	// A flag and its value: --redis_password=V, --api-key V, -password 'V'.
	{re: regexp.MustCompile(`(?:^|[\s"'(,\[=])(--?[A-Za-z][A-Za-z0-9_.-]*)(?:=|[ \t]+)` + valueRE), nameGroup: 1, valueGroup: 2},
	// A name=value pair: API_TOKEN=V, Password=V; (ODBC), AccountKey=V; (Azure), ?access_token=V&.
	{re: regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.-]*)=` + valueRE), nameGroup: 1, valueGroup: 2},
	// A JSON pair: "password": "V".
	{re: regexp.MustCompile(`"([A-Za-z_][A-Za-z0-9_.-]{0,80})"\s*:\s*("(?:[^"\\\n]|\\.)*")`), nameGroup: 1, valueGroup: 2},
	// A YAML pair at a line's start or in a flow mapping: "  API_TOKEN: V", "{HF_TOKEN: V}".
	{re: regexp.MustCompile(`(?m)(?:^|[{,])[ \t]*([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*:[ \t]+` + valueRE), nameGroup: 1, valueGroup: 2},
	// An Authorization header, Ray's x-ray-authorization included: the credential after the scheme,
	// up to a backslash too (no scheme's credential holds one; in a JSON string that holds JSON,
	// `Bearer T\"` ends in an escape that must stay whole).
	{re: regexp.MustCompile(`(?i)authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|negotiate)\s+)?([^\s"',\\]+)`), valueGroup: 1,
		need: func(l string) bool { return strings.Contains(l, "authorization") }},
	// A bearer token anywhere: "Bearer V".
	{re: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{8,})`), valueGroup: 1,
		need: func(l string) bool { return strings.Contains(l, "bearer") }},
}

// pemKey is a PEM private key's body, across its lines.
var pemKey = shape{re: regexp.MustCompile(`-----BEGIN[A-Z ]*PRIVATE KEY( BLOCK)?-----([\s\S]*?)-----END`), valueGroup: 2}

// secretHints are what every name-gated shape's text must contain (lower-cased).
var secretHints = []string{"pass", "secret", "token", "key", "credential", "private", "pwd", "auth", "dsn", "sig", "bearer", "cookie", "sas"}

func hasSecretWord(lower string) bool {
	for _, h := range secretHints {
		if strings.Contains(lower, h) {
			return true
		}
	}
	return false
}

// span is a value's place in a text.
type span struct{ start, end int }

// lineHints are what a line must hold (lower-cased) for any shape but the PEM key's to match in
// it: the secret words, a URI's "://", and the header words. One Aho-Corasick pass over a text
// finds the lines that hold one; the expressions run on those lines alone. A rendered object or
// a log is mostly lines with none, and an expression run over all of it (a YAML pair matches
// every line of a YAML document) would cost more than everything else a bundle does.
var lineHints = ahocorasick.NewTrieBuilder().AddStrings(append(append([]string(nil), secretHints...), "://")).Build()

// shapeSpans finds the values of every shape in s, sorted and merged.
func shapeSpans(s string) []span {
	if len(s) < minSecret {
		return nil
	}
	var out []span
	withLower(s, func(lower []byte) { out = shapeSpansIn(s, lower) })
	return out
}

// shapeSpansIn is shapeSpans with s lower-cased already (lower).
func shapeSpansIn(s string, lower []byte) []span {
	if len(s) < minSecret {
		return nil
	}
	var out []span
	markedLines(lineHints, lower, func(start, stop int) {
		for _, sp := range theShapeMemo.spans(s[start:stop], lower[start:stop]) {
			out = append(out, span{start + sp.start, start + sp.end})
		}
	})
	if bytes.Contains(lower, []byte("private key")) {
		out = matchSpans(pemKey, s, 0, out)
	}
	return merge(out)
}

// shapeMemo remembers the spans the line-wise shapes find in a line, relative to it, by the
// line's exact text: they depend on nothing else, and a fleet's rendered objects repeat most of
// their marked lines (each is read twice besides: when its file is rendered, and when the
// archive is written).
type shapeMemo struct {
	mu    sync.RWMutex
	lines map[string][]span
	bytes int
	max   int // bytes of lines remembered at most: past it, new lines are read and not remembered
}

var theShapeMemo = &shapeMemo{lines: map[string][]span{}, max: 8 << 20}

// spans is lineSpans of line (lower, lower-cased) at offset 0, remembered.
func (m *shapeMemo) spans(line string, lower []byte) []span {
	m.mu.RLock()
	sp, ok := m.lines[line]
	m.mu.RUnlock()
	if ok {
		return sp
	}
	sp = lineSpans(line, string(lower), 0, nil)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.lines[line]; !ok && m.bytes+len(line) <= m.max {
		// A copy: the line is a slice of its text, which the memo must not keep alive.
		m.lines[strings.Clone(line)] = sp
		m.bytes += len(line)
	}
	return sp
}

// lineSpans adds the values the line-wise shapes find in line, which starts at offset in its text.
func lineSpans(line, lower string, offset int, out []span) []span {
	hint := hasSecretWord(lower)
	for _, sh := range shapes {
		if (sh.need == nil && !hint) || (sh.need != nil && !sh.need(lower)) {
			continue
		}
		out = matchSpans(sh, line, offset, out)
	}
	return out
}

// matchSpans adds the values sh finds in s (at offset in its text).
func matchSpans(sh shape, s string, offset int, out []span) []span {
	for _, m := range sh.re.FindAllStringSubmatchIndex(s, -1) {
		if sh.nameGroup > 0 && !IsSecretName(s[m[2*sh.nameGroup]:m[2*sh.nameGroup+1]]) {
			continue
		}
		start, end := m[2*sh.valueGroup], m[2*sh.valueGroup+1]
		if start < 0 {
			continue
		}
		v := s[start:end]
		// Quotes stay; what they hold goes.
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			start, end = start+1, end-1
			v = v[1 : len(v)-1]
		}
		if !secretValue(v) {
			continue
		}
		out = append(out, span{offset + start, offset + end})
	}
	return out
}

// secretValue: what a shape found is a secret unless it is empty, already redacted, a flag, or
// a plain word of settings (RAY_AUTH_MODE's token).
func secretValue(v string) bool {
	v = strings.TrimSpace(v)
	return v != "" && !hasRedacted(v) && !strings.HasPrefix(v, "-") && !plainValues[strings.ToLower(v)] &&
		!strings.HasPrefix(v, "$(") && !strings.HasPrefix(v, "${")
}

func merge(ss []span) []span {
	if len(ss) < 2 {
		return ss
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i].start < ss[j].start })
	out := ss[:1]
	for _, s := range ss[1:] {
		last := &out[len(out)-1]
		if s.start <= last.end {
			if s.end > last.end {
				last.end = s.end
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// replaceSpans writes s with every span replaced by Redacted.
func replaceSpans(s string, ss []span) string {
	if len(ss) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for _, sp := range ss {
		b.WriteString(s[at:sp.start])
		b.WriteString(Redacted)
		at = sp.end
	}
	b.WriteString(s[at:])
	return b.String()
}

// hasRedacted reports whether v holds a redaction already, or a piece of one (a shape's value
// stops at a "]", so "[redacted" is what "API_KEY=[redacted]" shows it).
func hasRedacted(v string) bool {
	return strings.Contains(v, "[redacted") || strings.Contains(v, "redacted]")
}
