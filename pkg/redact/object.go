package redact

import (
	"encoding/json"
	"strings"
)

// Object redacts an object decoded into JSON's shapes (maps, slices, strings) in place, by its
// structure, and adds what it redacted to found, for the value layer:
//   - a name/value pair under a secret-sounding name (an env variable), a field with a secret
//     name, rayStartParams, gcsFaultToleranceOptions' redisPassword;
//   - a container's command and args as one argv, a RayJob's entrypoint as a command line;
//   - the documents fields hold (runtimeEnvYAML, serveConfigV2, kubectl's
//     last-applied-configuration), parsed;
//   - the names of the Secrets it refers to (env's secretKeyRef, envFrom's secretRef, a secret
//     volume, imagePullSecrets): a Secret's name can be the secret's only disguise.
//
// A field that cannot be read by its structure (a serveConfigV2 that is not YAML) is redacted
// whole, never written raw, and returned as a Problem for the writer to say so.
func Object(v any, found Set) []Problem {
	w := walker{found: found}
	w.value(v, "")
	return w.problems
}

// Problem is a field Object redacted whole because it could not read it.
type Problem struct {
	Field  string // its path in the object: spec.serveConfigV2
	Reason string
}

type walker struct {
	found    Set
	problems []Problem
}

// secretRefs are the objects that name a Secret and secretFields the fields that name one
// directly (a secret volume's secretName, authOptions' secretName).
var (
	secretRefs   = map[string]bool{"secretKeyRef": true, "secretRef": true, "secret": true}
	secretFields = map[string]bool{"secretName": true}
	// embeddedFields hold a YAML or JSON document of their own.
	embeddedFields = map[string]bool{"runtimeEnvYAML": true, "serveConfigV2": true}
	// commandLineFields hold a shell command line.
	commandLineFields = map[string]bool{"entrypoint": true}
)

// lastApplied is kubectl's annotation that repeats the whole object as JSON: it is redacted by
// its structure too, as the object is.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

func (w *walker) value(v any, at string) {
	switch x := v.(type) {
	case map[string]any:
		w.object(x, at)
	case []any:
		for _, e := range x {
			w.value(e, at)
		}
	}
}

func join(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}

func (w *walker) object(m map[string]any, at string) {
	// name/value pairs: env variables, and anything shaped like them.
	if name, ok := m["name"].(string); ok && IsSecretName(name) {
		if v, ok := m["value"].(string); ok && v != "" {
			w.found.AddText(v)
			w.found.Add(v)
			m["value"] = Redacted
		}
	}
	w.argv(m)
	for k, v := range m {
		switch x := v.(type) {
		case string:
			w.field(m, k, x, at)
		case map[string]any:
			if secretRefs[k] {
				for _, f := range []string{"name", "key", "secretName"} {
					if s, ok := x[f].(string); ok && s != "" {
						if f != "key" {
							w.secretName(s)
						}
						x[f] = Redacted
					}
				}
			}
			if s, ok := x["value"].(string); ok && s != "" && IsSecretName(k) {
				// gcsFaultToleranceOptions.redisPassword: {value: ...}
				w.found.Add(s)
				x["value"] = Redacted
			}
			if strings.EqualFold(k, "rayStartParams") {
				for pk, pv := range x {
					if s, ok := pv.(string); ok && IsSecretName(pk) {
						w.found.Add(s)
						x[pk] = Redacted
					}
				}
			}
			w.object(x, join(at, k))
		case []any:
			if k == "imagePullSecrets" {
				for _, e := range x {
					if em, ok := e.(map[string]any); ok {
						if s, ok := em["name"].(string); ok {
							w.secretName(s)
							em["name"] = Redacted
						}
					}
				}
			}
			w.value(x, join(at, k))
		}
	}
}

// field redacts one string field, m[k] of the object at at (whose path is joined only for the
// fields that need it: a fleet's objects hold millions of strings).
func (w *walker) field(m map[string]any, k, x, at string) {
	switch {
	case x == "" || x == Redacted:
	case k == lastApplied:
		m[k] = w.json(x, join(at, k))
	case embeddedFields[k]:
		red, err := RedactEmbedded(x, w.found)
		if err != nil {
			w.problems = append(w.problems, Problem{Field: join(at, k), Reason: err.Error()})
		}
		m[k] = red
	case commandLineFields[k]:
		m[k] = RedactCommandLine(x, w.found)
	case secretFields[k]:
		w.secretName(x)
		m[k] = Redacted
	case IsSecretName(k) && !plainValues[strings.ToLower(x)]:
		w.found.Add(x)
		m[k] = Redacted
	}
	// Any other string's shapes are the writer's pass over the whole text (Redactor.Learn).
}

// argv reads a container's command and args as one command line and redacts both.
func (w *walker) argv(m map[string]any) {
	cmd, okCmd := strings_(m["command"])
	args, okArgs := strings_(m["args"])
	if !okCmd && !okArgs {
		return
	}
	red := RedactArgv(append(append([]string(nil), cmd...), args...), w.found)
	if okCmd {
		m["command"] = anys(red[:len(cmd)])
	}
	if okArgs {
		m["args"] = anys(red[len(cmd):])
	}
}

// strings_ is v as a list of strings, when it is one.
func strings_(v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func (w *walker) json(s, path string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		w.problems = append(w.problems, Problem{Field: path, Reason: "not JSON, so redacted whole"})
		return Redacted
	}
	w.value(v, path)
	b, err := json.Marshal(v)
	if err != nil {
		return Redacted
	}
	return string(b)
}

// secretName hands a Secret's name to the value layer when it is distinctive enough to be
// replaced wherever it appears: a key within a Secret ("password") or a short name ("redis") is
// a common word, which would be blanked out of every message; those are redacted where they are
// referenced only.
func (w *walker) secretName(name string) {
	if len(name) >= minSecretName {
		w.found.Add(name)
	}
}

// minSecretName is the shortest Secret name replaced everywhere.
const minSecretName = 8

// JSON is a JSON document with Object applied to it (a Ray dashboard's answer); a document that
// does not parse is Redacted whole.
func JSON(s string, found Set) string {
	w := walker{found: found}
	return w.json(s, "")
}
