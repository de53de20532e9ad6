package redact

import (
	"strings"
	"unicode"
)

// Redacted replaces a secret value in every byte the tool writes.
const Redacted = "[redacted]"

// secretFragments mark a name as secret when they appear anywhere in it, case-insensitively:
// "pass" covers password, passwd, requirepass; "apikey" a name written in one word.
var secretFragments = []string{"pass", "secret", "token", "credential", "private", "apikey", "accesskey", "pwd", "authkey"}

// secretWords mark a name as secret when they are one of its words (split at _, -, ., and
// camelCase), and the name has another word: OPENAI_API_KEY, AccountKey, DATABASE_DSN,
// X-Auth; a field named "key" alone (a toleration's, a label selector's) is not one.
var secretWords = map[string]bool{"key": true, "dsn": true, "auth": true, "sig": true, "signature": true, "sas": true, "bearer": true, "cookie": true}

// plainSuffixes end names whose values are settings about a secret, not the secret: KubeRay's
// RAY_AUTH_MODE=token, TOKEN_TYPE, SECRET_NAME_FILE, PASSWORD_PATH, API_KEY_ENABLED.
var plainSuffixes = map[string]bool{"mode": true, "type": true, "enabled": true, "enable": true, "disabled": true, "file": true,
	"path": true, "dir": true, "length": true, "ttl": true, "timeout": true, "algorithm": true, "header": true, "kind": true,
	"policy": true, "expiry": true, "expiration": true, "seconds": true, "audience": true, "issuer": true}

// plainNames are Kubernetes' own fields whose names sound secret and whose values a reader needs.
var plainNames = map[string]bool{
	"serviceaccountname": true, "automountserviceaccounttoken": true, "authority": true, "topologykey": true,
	"tokenreviews": true, "passthrough": true, "bypass": true, "compass": true, "keyring": true,
}

// IsSecretName reports whether a name (an env variable, a start parameter, a flag, a JSON or
// YAML key, a URL query parameter) holds a secret by its look.
func IsSecretName(name string) bool {
	name = strings.TrimLeft(name, "-")
	if name == "" {
		return false
	}
	lower := strings.ToLower(name)
	if plainNames[lower] || !hasSecretWord(lower) {
		return false // every fragment and word below holds one of the hints
	}
	ws := words(name)
	if len(ws) > 1 && plainSuffixes[ws[len(ws)-1]] {
		return false
	}
	for _, f := range secretFragments {
		if strings.Contains(lower, f) {
			return true
		}
	}
	if len(ws) > 1 {
		for _, w := range ws {
			if secretWords[w] {
				return true
			}
		}
	}
	return false
}

// words splits a name into lower-case words at separators and camelCase humps: "OPENAI_API_KEY"
// is openai, api, key; "accountKey" is account, key.
func words(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// plainValues are values that are never secrets whatever their name says: switches and the
// modes of KubeRay's and Ray's settings (RAY_AUTH_MODE's "token"). The structural layer still
// redacts them in place under a secret name; the value layer does not replace them everywhere,
// which would blank the word out of every message ("Missing authentication [redacted]").
var plainValues = map[string]bool{
	"token": true, "true": true, "false": true, "yes": true, "no": true, "on": true, "off": true, "none": true, "null": true,
	"nil": true, "disabled": true, "enabled": true, "disable": true, "enable": true, "required": true, "optional": true,
	"k8s": true, "basic": true, "bearer": true, "default": true, "password": true, "secret": true, "redacted": true,
	"empty": true, "unset": true, "auto": true, "always": true, "never": true,
}

// minSecret: a value shorter than this is not replaced everywhere (it would blank out common
// words and numbers); passwords that short are no secret anyway.
const minSecret = 4

// worthReplacing reports whether v is distinctive enough to be replaced wherever it appears.
func worthReplacing(v string) bool {
	if len(v) < minSecret || plainValues[strings.ToLower(v)] || hasRedacted(v) {
		return false
	}
	// A number (a port, a count) or a path is a setting, not a secret.
	if strings.Trim(v, "0123456789.") == "" || (strings.HasPrefix(v, "/") && !strings.ContainsAny(v, " :@")) {
		return false
	}
	// Environment references are resolved elsewhere: $(REDIS_PASSWORD), ${TOKEN}.
	if strings.HasPrefix(v, "$(") || strings.HasPrefix(v, "${") {
		return false
	}
	return true
}
