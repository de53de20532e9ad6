package artifact

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	yamlv2 "go.yaml.in/yaml/v2"
)

// fastYAML writes a decoded JSON document (maps with string keys, lists, strings, int64, uint64,
// float64, bools, nils) in yaml.v2's block style, byte for byte as yaml.v2.Marshal does, without
// its emitter: that emitter keeps every event of a document until the document ends, about
// 170 kB of garbage a pod, and was most of a bundle's allocations. It knows only what Kubernetes
// objects need; for anything else (a multi-line or non-ASCII string, a list in a list, a long
// key, a double-quoted string it would have to fold) it says no and the caller asks yaml.v2.
// How each string is quoted is still yaml.v2's decision: it marshals the string alone once
// (styleOf) and this writer only places and folds it. TestObjectYAMLAsSigsYAML holds the two to
// each other.
func fastYAML(doc map[string]any) ([]byte, bool) {
	w := yamlWriter{}
	if !w.mapping(doc, 0, false) {
		return nil, false
	}
	w.b.WriteByte('\n')
	return w.b.Bytes(), true
}

// bestWidth is yaml.v2's line width: a plain or quoted scalar breaks at a space past it.
const bestWidth = 80

type yamlWriter struct {
	b   bytes.Buffer
	col int // the column the next byte is written at
}

func (w *yamlWriter) str(s string) {
	w.b.WriteString(s)
	w.col += len(s) // ASCII only: one column a byte
}

func (w *yamlWriter) newline(indent int) {
	w.b.WriteByte('\n')
	w.b.WriteString(spaces(indent))
	w.col = indent
}

func spaces(n int) string {
	const s = "                                                                "
	if n > len(s) {
		return strings.Repeat(" ", n)
	}
	return s[:n]
}

// mapping writes m's entries at indent; inline: the first entry goes where the writer stands
// (after a sequence's "- ").
func (w *yamlWriter) mapping(m map[string]any, indent int, inline bool) bool {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	for i, k := range keys {
		if i > 0 || !inline {
			if w.b.Len() > 0 {
				w.newline(indent)
			}
		}
		st, ok := styleOf(k)
		if !ok || st.kind != plainStyle || len(k) > 100 {
			return false
		}
		w.str(k + ":")
		if !w.value(m[k], indent, true) {
			return false
		}
	}
	return true
}

// value writes v after "key:" (inMap) or "-", at the block indent of its parent.
func (w *yamlWriter) value(v any, indent int, inMap bool) bool {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			w.str(" {}")
			return true
		}
		if inMap {
			return w.mapping(x, indent+2, false)
		}
		w.str(" ")
		return w.mapping(x, indent+2, true)
	case []any:
		if len(x) == 0 {
			w.str(" []")
			return true
		}
		if !inMap {
			return false // a list in a list: yaml.v2's own layout
		}
		for _, e := range x {
			w.newline(indent)
			w.str("-")
			if _, nested := e.([]any); nested {
				return false
			}
			if !w.value(e, indent, false) {
				return false
			}
		}
		return true
	case string:
		return w.scalar(x, indent+2)
	case nil:
		w.str(" null")
	case bool:
		w.str(" " + strconv.FormatBool(x))
	case int64:
		w.str(" " + strconv.FormatInt(x, 10))
	case uint64:
		w.str(" " + strconv.FormatUint(x, 10))
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		switch s {
		case "+Inf", "-Inf", "NaN":
			return false
		}
		w.str(" " + s)
	default:
		return false
	}
	return true
}

// scalar writes s as yaml.v2 would as a block value, breaking it at spaces past bestWidth as
// yaml.v2's plain and single-quoted writers do; indent is where a broken line goes on.
func (w *yamlWriter) scalar(s string, indent int) bool {
	if s == "" {
		w.str(` ""`) // an empty value resolves to null: yaml.v2 quotes it
		return true
	}
	st, ok := styleOf(s)
	if !ok {
		return false
	}
	w.str(" ")
	switch st.kind {
	case plainStyle:
		w.broken(s, indent, false)
	case singleStyle:
		w.str("'")
		w.broken(s, indent, true)
		w.str("'")
	default:
		// Double-quoted: written as yaml.v2 wrote it alone, when it cannot reach a break.
		if !strings.Contains(st.alone, " ") || w.col+len(st.alone) <= bestWidth {
			w.str(st.alone)
			return true
		}
		return false
	}
	return true
}

// broken writes s, each space that comes past bestWidth (not after another space, not before
// one) becoming a line break to indent: yaml_emitter_write_plain_scalar and
// yaml_emitter_write_single_quoted (which never breaks at its first or last byte, and doubles
// its quotes).
func (w *yamlWriter) broken(s string, indent int, quoted bool) {
	spaced := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' {
			next := i+1 < len(s) && s[i+1] == ' '
			if !spaced && w.col > bestWidth && !next && (!quoted || i > 0 && i < len(s)-1) {
				w.newline(indent)
			} else {
				w.b.WriteByte(' ')
				w.col++
			}
			spaced = true
			continue
		}
		if quoted && c == '\'' {
			w.b.WriteByte('\'')
			w.col++
		}
		w.b.WriteByte(c)
		w.col++
		spaced = false
	}
}

type styleKind int

const (
	plainStyle styleKind = iota
	singleStyle
	doubleStyle
)

// style is how yaml.v2 quotes a string, and, double-quoted, the string as it wrote it alone.
type style struct {
	kind  styleKind
	alone string
}

// styles caches styleOf for short strings: a fleet's objects repeat most of them (quantities,
// ports, times of a fleet made in the same minute); the long ones that are not plainWord are
// mostly unique (UIDs, addresses) and not kept. It is bounded: full, it starts again.
var styles = struct {
	sync.RWMutex
	m map[string]style
}{m: map[string]style{}}

const (
	maxStyles      = 1 << 14
	maxStyleLength = 24
)

// styleOf asks yaml.v2 how it writes s alone: a document of one scalar is written in the style
// a block value gets. Not ok for what fastYAML leaves to yaml.v2: an empty, multi-line or
// non-ASCII string, or one yaml.v2 writes in a style other than plain, single- or
// double-quoted.
func styleOf(s string) (style, bool) {
	if s == "" {
		return style{}, false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return style{}, false
		}
	}
	if plainWord(s) {
		return style{kind: plainStyle}, true
	}
	styles.RLock()
	st, ok := styles.m[s]
	styles.RUnlock()
	if ok {
		return st, true
	}
	out, err := yamlv2.Marshal(s)
	if err != nil {
		return style{}, false
	}
	alone := strings.TrimSuffix(string(out), "\n")
	switch {
	case strings.Contains(alone, "\n"):
		// Broken at bestWidth alone; its style is still told by its first byte (a string
		// starting with a quote is never plain).
		switch alone[0] {
		case '"':
			return style{}, false
		case '\'':
			st.kind = singleStyle
		default:
			st.kind = plainStyle
		}
	case alone == s:
		st.kind = plainStyle
	case alone == "'"+strings.ReplaceAll(s, "'", "''")+"'":
		st.kind = singleStyle
	case alone[0] == '"':
		st = style{kind: doubleStyle, alone: alone}
	default:
		return style{}, false
	}
	if len(s) > maxStyleLength {
		return st, true
	}
	styles.Lock()
	if len(styles.m) >= maxStyles {
		styles.m = map[string]style{}
	}
	styles.m[s] = st
	styles.Unlock()
	return st, true
}

// plainWord is a string yaml.v2 writes plain without asking: longer than any word it reads as a
// bool or null (yes, False, null, ...), starting with a letter or a slash (never a number or a
// timestamp) and made of letters, digits and ._/- only (no indicator, no space): names, labels'
// keys, images without a tag, paths.
func plainWord(s string) bool {
	if len(s) <= 5 || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z' || s[0] == '/') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '/' || c == '-') {
			return false
		}
	}
	return true
}

// keyLess is yaml.v2's order of string keys (its keyList.Less): runs of digits compare as
// numbers, a letter sorts after a non-letter.
func keyLess(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			continue
		}
		al := unicode.IsLetter(ar[i])
		bl := unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			return bl
		}
		var ai, bi int
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an = 1
					bn = 1
					break
				}
			}
		}
		for ai = i; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for bi = i; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}
