package rayapi

import (
	"bytes"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// Forget replaces secret (the token a read sent) wherever the dashboard's answers or the reasons
// given could carry it back: an answer echoing a header, an error quoting a request. The reader
// calls it before v leaves it, so nothing kept, printed or bundled holds the token.
func (v *View) Forget(secret string) {
	if secret == "" {
		return
	}
	b := []byte(secret)
	for i := range v.Answers {
		a := &v.Answers[i]
		if bytes.Contains(a.Body, b) {
			a.Body = bytes.ReplaceAll(a.Body, b, []byte(redact.Redacted))
		}
		if a.Unreachable != nil {
			a.Unreachable.Detail = strings.ReplaceAll(a.Unreachable.Detail, secret, redact.Redacted)
		}
	}
	for i := range v.Failed {
		v.Failed[i] = strings.ReplaceAll(v.Failed[i], secret, redact.Redacted)
	}
	if v.Unreachable != nil {
		v.Unreachable.Detail = strings.ReplaceAll(v.Unreachable.Detail, secret, redact.Redacted)
	}
}
