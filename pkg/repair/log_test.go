package repair

import (
	"bytes"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

func TestLoggerFormats(t *testing.T) {
	now := func() time.Time { return t0 }
	var b bytes.Buffer
	NewLogger(&b, "logfmt", now).Line("info", "deleted pod a/b (rule head-evicted)", "rule", "head-evicted", "why", `say "x"`, "empty", "")
	want := `time=2024-05-08T07:55:30Z level=info msg="deleted pod a/b (rule head-evicted)" rule=head-evicted why="say \"x\"" empty=""` + "\n"
	if b.String() != want {
		t.Errorf("logfmt:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	NewLogger(&b, "json", now).Line("warn", "lost leadership", "lease", "ns/kubectl-ray-heal", "n", 2)
	want = `{"time":"2024-05-08T07:55:30Z","level":"warn","msg":"lost leadership","lease":"ns/kubectl-ray-heal","n":"2"}` + "\n"
	if b.String() != want {
		t.Errorf("json:\n%s\nwant:\n%s", b.String(), want)
	}
}

// Every message and value goes through the redactor, whoever writes the line: an API error that
// echoes a Redis URI, a value the watchdog was told is secret.
func TestLoggerRedactsEveryLine(t *testing.T) {
	var b bytes.Buffer
	l := NewLogger(&b, "logfmt", func() time.Time { return t0 })
	l.Know(redact.Set{"kn0wnS3cretVal": {}})
	l.Line("warn", "dial redis://:l0gPw77@redis:6379 failed", "error", "Authorization: Bearer tok3nFromApi99", "why", "echoes kn0wnS3cretVal")
	for _, s := range []string{"l0gPw77", "tok3nFromApi99", "kn0wnS3cretVal"} {
		if bytes.Contains(b.Bytes(), []byte(s)) {
			t.Errorf("the log line holds %s: %s", s, b.String())
		}
	}
	if !bytes.Contains(b.Bytes(), []byte("@redis:6379")) {
		t.Errorf("the line lost what a reader needs: %s", b.String())
	}
}
