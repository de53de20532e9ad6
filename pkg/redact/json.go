package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// A JSON document is redacted string by string when its text shows a secret: a value cut out of
// the text as it stands may end inside an escape (`Bearer T0KEN\"` in a JSON string that holds
// JSON, as kubectl's last-applied-configuration does), and the document would no longer parse.
// Each string is unescaped, redacted as text is, and written again; what lies between strings
// (keys' quotes, colons, the indentation) is kept byte for byte. A text with no secret, nearly
// every object of a fleet, is only read once, as Known reads any text.

// KnownJSON is Known for a JSON document: the same values and shapes redacted, every escape kept
// whole, so that the result is still the JSON it was. Read string by string, a shape cannot see
// a name in one string and its value in the next: a value under a secret-sounding key is
// redacted as the text's JSON pair shape redacts it ("password": "V"), and a flag and its value
// in two strings are the structural pass's (a command line's list).
func (r *Redactor) KnownJSON(doc string) string {
	if r.Known(doc) == doc {
		return doc
	}
	out, err := mapStrings(doc, func(key, s string) string {
		if key != "" && IsSecretName(key) && secretValue(s) {
			return Redacted
		}
		return r.Known(s)
	})
	if err != nil {
		// Not JSON to begin with (a file named .json that holds something else): as text.
		return r.Known(doc)
	}
	return out
}

// LearnJSON is Learn for a JSON document: what its text shows, and what each of its strings shows
// unescaped (a token inside an escaped quote is learned without the escape).
func (r *Redactor) LearnJSON(doc string) {
	if r == nil {
		return
	}
	found := Set{}
	found.AddFreeTextJSON(doc)
	r.Know(found)
}

// AddFreeTextJSON is AddFreeText for a JSON document: the whole text is read, and when it shows
// anything, each of its strings unescaped too.
func (set Set) AddFreeTextJSON(doc string) {
	n := len(set)
	set.AddFreeText(doc)
	if len(set) == n {
		return
	}
	_, _ = mapStrings(doc, func(_, s string) string {
		set.AddFreeText(s)
		return s
	})
}

// mapStrings is doc with each of its strings replaced by f's answer (written as JSON writes it,
// <, > and & as they are); f is given the key a value stands under ("" for an array's element,
// the top level and a key itself). A string f keeps is kept byte for byte, as is everything
// between strings.
func mapStrings(doc string, f func(key, s string) string) (string, error) {
	d := json.NewDecoder(strings.NewReader(doc))
	var out strings.Builder
	last, prev := 0, 0 // doc[:last] is in out; prev is where the last token ended
	// In an object, tokens alternate key and value: each open object counts its tokens.
	type level struct {
		object bool
		n      int
		key    string
	}
	var stack []level
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		end := int(d.InputOffset())
		key, isKey := "", false
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			if delim, ok := tok.(json.Delim); !ok || delim == '{' || delim == '[' {
				if top.object {
					isKey = top.n%2 == 0
					key = top.key
				}
				top.n++
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				stack = append(stack, level{object: t == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if isKey {
				stack[len(stack)-1].key = t
				key = ""
			}
			if w := f(key, t); w != t {
				start := prev + strings.IndexByte(doc[prev:end], '"')
				out.WriteString(doc[last:start])
				out.Write(jsonString(w))
				last = end
			}
		}
		prev = end
	}
	if last == 0 {
		return doc, nil
	}
	out.WriteString(doc[last:])
	return out.String(), nil
}

// jsonString is s as a JSON string, quoted, with <, > and & as they are.
func jsonString(s string) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// jsonEscaped is v as a JSON string holds it, without its quotes.
func jsonEscaped(v string) string {
	q := jsonString(v)
	return string(q[1 : len(q)-1])
}
