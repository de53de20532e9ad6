package redact

import "strings"

// Set is a set of secret values found by structure or by shape: the value layer replaces each
// wherever it appears. The loader collects them while it trims listed objects, so that the
// specs can be dropped and the values still redacted.
type Set map[string]struct{}

// Add adds v, trimmed of spaces and quotes, when it is distinctive enough to be replaced
// wherever it appears.
//
// A value is kept as a copy of its own: the text it was found in may be a renderer's buffer,
// reused for the next file, and a value must not keep a whole file alive either.
func (set Set) Add(v string) {
	v = strings.Trim(strings.TrimSpace(v), `"'`)
	if _, ok := set[v]; !ok && worthReplacing(v) {
		set[strings.Clone(v)] = struct{}{}
	}
}

// AddText adds the secrets a spec's string holds by their shape: URI passwords, secret flags and
// name=value pairs, Authorization headers, PEM keys. gitleaks' provider formats are left to the
// writers' pass over the whole text (Redactor.Learn and String): run on every string of every
// pod's spec, a fleet's thousands, it would cost doctor more than its reads.
func (set Set) AddText(v string) {
	if len(v) < minSecret {
		return
	}
	for _, sp := range shapeSpans(v) {
		set.Add(v[sp.start:sp.end])
	}
}

// AddFreeText is AddText with gitleaks' provider formats too: for free text (logs, messages).
// Both passes read the same lower-cased copy of v.
func (set Set) AddFreeText(v string) {
	if v == "" {
		return
	}
	withLower(v, func(lower []byte) {
		if len(v) >= minSecret {
			for _, sp := range shapeSpansIn(v, lower) {
				set.Add(v[sp.start:sp.end])
			}
		}
		detectedIn(v, lower, set.Add)
	})
}

// Merge adds every value of other.
func (set Set) Merge(other Set) {
	for v := range other {
		set[v] = struct{}{}
	}
}
