package bundle

import (
	"encoding/json"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
)

// Every file of a bundle is redacted twice. First each object, by its structure (redactObject):
// values under secret-sounding names (an env variable's value, a start parameter, a Redis
// password) and the names of the Secrets it refers to. Then every byte written, text included
// (the logs, doctor's report, the index), goes through doctor's redactor (diagnose.RedactorWith),
// which knows every secret value of the snapshot's specs and every Secret reference the first
// pass found, so an annotation that repeats the spec (kubectl's last-applied-configuration) and
// a log that echoes a password are redacted as well. Secrets themselves are never read.

// redactObject redacts an object decoded into JSON's shapes (maps, slices, strings) in place,
// and adds what it redacted to found, for the text pass.
func redactObject(v any, found diagnose.Secrets) {
	switch x := v.(type) {
	case map[string]any:
		redactMap(x, found)
	case []any:
		for _, e := range x {
			redactObject(e, found)
		}
	}
}

// secretRefs are the objects that name a Secret (env's secretKeyRef, envFrom's secretRef, a
// projected volume's secret) and secretFields the fields that name one directly (a secret
// volume's secretName): the names are redacted too, as the issue asks: a Secret's name can be
// the secret's only disguise (redis-password-s3cr3t).
var (
	secretRefs   = map[string]bool{"secretKeyRef": true, "secretRef": true, "secret": true}
	secretFields = map[string]bool{"secretName": true}
)

func redactMap(m map[string]any, found diagnose.Secrets) {
	// name/value pairs: env variables, and anything shaped like them.
	if name, ok := m["name"].(string); ok && diagnose.IsSecretName(name) {
		if v, ok := m["value"].(string); ok && v != "" {
			found.AddText(v)
			found.Add(v)
			m["value"] = diagnose.Redacted
		}
	}
	for k, v := range m {
		switch x := v.(type) {
		case string:
			if x == "" || x == diagnose.Redacted {
				continue
			}
			if k == lastApplied {
				m[k] = redactJSON(x, found)
				continue
			}
			if secretFields[k] {
				foundName(found, x)
				m[k] = diagnose.Redacted
				continue
			}
			if diagnose.IsSecretName(k) && !notSecretKeys[k] {
				found.Add(x)
				m[k] = diagnose.Redacted
				continue
			}
			found.AddText(x)
		case map[string]any:
			if secretRefs[k] {
				for _, f := range []string{"name", "key", "secretName"} {
					if s, ok := x[f].(string); ok && s != "" {
						if f != "key" {
							foundName(found, s)
						}
						x[f] = diagnose.Redacted
					}
				}
			}
			if s, ok := x["value"].(string); ok && s != "" && diagnose.IsSecretName(k) {
				// gcsFaultToleranceOptions.redisPassword: {value: ...}
				found.Add(s)
				x["value"] = diagnose.Redacted
			}
			if strings.EqualFold(k, "rayStartParams") {
				for pk, pv := range x {
					if s, ok := pv.(string); ok && diagnose.IsSecretName(pk) {
						found.Add(s)
						x[pk] = diagnose.Redacted
					}
				}
			}
			redactMap(x, found)
		case []any:
			if k == "imagePullSecrets" {
				for _, e := range x {
					if em, ok := e.(map[string]any); ok {
						if s, ok := em["name"].(string); ok {
							foundName(found, s)
							em["name"] = diagnose.Redacted
						}
					}
				}
			}
			redactObject(x, found)
		}
	}
}

// lastApplied is kubectl's annotation that repeats the whole object as JSON: it is redacted by
// its structure too, as the object is (a Secret's key, which the text pass does not know, is
// there as well).
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

func redactJSON(s string, found diagnose.Secrets) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		found.AddText(s)
		return s
	}
	redactObject(v, found)
	b, err := json.Marshal(v)
	if err != nil {
		return diagnose.Redacted
	}
	return string(b)
}

// foundName hands a Secret's name to the text pass when it is distinctive enough to be replaced
// wherever it appears: a key within a Secret ("password") or a short name ("redis") is a common
// word, which the text pass would blank out of every message; those are redacted where they are
// referenced only.
func foundName(found diagnose.Secrets, name string) {
	if len(name) >= minSecretName {
		found.Add(name)
	}
}

// minSecretName is the shortest Secret name the text pass replaces everywhere.
const minSecretName = 8

// notSecretKeys are fields whose names sound secret and whose values are not: Kubernetes' own
// vocabulary, which a reader needs.
var notSecretKeys = map[string]bool{
	"serviceAccountName":           true,
	"automountServiceAccountToken": true,
	"authority":                    true,
}
