package redact

import (
	"sort"
	"strings"
	"sync"
)

// Redactor is what every byte the tool writes goes through. It replaces every value it knows
// (the value layer), then every secret free text shows by its shape, those gitleaks' rules find
// included. A nil *Redactor knows no value and still redacts by shape, so that a writer given
// none writes nothing raw.
type Redactor struct {
	mu     sync.Mutex
	known  Set
	dirty  bool
	values *strings.Replacer
}

// New is a redactor that knows the values of sets.
func New(sets ...Set) *Redactor {
	r := &Redactor{known: Set{}, dirty: true}
	for _, s := range sets {
		r.known.Merge(s)
	}
	return r
}

// Learn adds what s reveals by its shape to the values replaced everywhere: a token a log line
// prints after "Bearer" is then redacted in a later file where it stands bare.
func (r *Redactor) Learn(s string) {
	if r == nil {
		return
	}
	found := Set{}
	found.AddFreeText(s)
	r.Know(found)
}

// Know adds values to those replaced everywhere.
func (r *Redactor) Know(set Set) {
	if r == nil || len(set) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for v := range set {
		if _, ok := r.known[v]; !ok {
			r.known[v] = struct{}{}
			r.dirty = true
		}
	}
}

// Knows reports whether v is among the values replaced everywhere.
func (r *Redactor) Knows(v string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.known[v]
	return ok
}

func (r *Redactor) replacer() *strings.Replacer {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dirty {
		vals := make([]string, 0, len(r.known))
		for v := range r.known {
			vals = append(vals, v)
			// A bundle writes its objects as JSON, where a value holding a quote, a backslash
			// or a control character stands escaped: that form is replaced too.
			if e := jsonEscaped(v); e != v {
				if _, ok := r.known[e]; !ok {
					vals = append(vals, e)
				}
			}
		}
		// Longest first, so that a secret holding another is replaced whole.
		sort.Slice(vals, func(i, j int) bool {
			if len(vals[i]) != len(vals[j]) {
				return len(vals[i]) > len(vals[j])
			}
			return vals[i] < vals[j]
		})
		pairs := make([]string, 0, 2*len(vals))
		for _, v := range vals {
			pairs = append(pairs, v, Redacted)
		}
		r.values = strings.NewReplacer(pairs...)
		r.dirty = false
	}
	return r.values
}

// String is s with every secret redacted: the known values, then every shape, then what
// gitleaks finds.
func (r *Redactor) String(s string) string {
	if len(s) < minSecret {
		return s
	}
	s = r.Known(s)
	var found []string
	detected(s, func(v string) { found = append(found, v) })
	if len(found) > 0 {
		sort.Slice(found, func(i, j int) bool { return len(found[i]) > len(found[j]) })
		for _, v := range found {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	return s
}

// Known is s with the known values and every shape redacted, without gitleaks' pass: for a text
// the redactor has Learned already, whose gitleaks findings are known values now.
func (r *Redactor) Known(s string) string {
	if len(s) < minSecret {
		return s
	}
	if r != nil {
		s = r.replacer().Replace(s)
	}
	return replaceSpans(s, shapeSpans(s))
}

// Bytes is String for bytes.
func (r *Redactor) Bytes(b []byte) []byte { return []byte(r.String(string(b))) }

// Func is String as a function value, for the writers that take one.
func (r *Redactor) Func() func(string) string { return r.String }
