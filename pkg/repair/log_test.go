package repair

import (
	"bytes"
	"testing"
	"time"
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
