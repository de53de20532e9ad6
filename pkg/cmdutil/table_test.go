package cmdutil

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	tb := NewTable("SEVERITY", "RULE", "MESSAGE")
	tb.Append("error", "head-evicted", "head pod evicted")
	tb.Append("", "", "fix: run it")
	tb.Append("warning", "node-pressure")
	var b bytes.Buffer
	if err := tb.Render(&b, "  "); err != nil {
		t.Fatal(err)
	}
	want := "  SEVERITY   RULE            MESSAGE\n" +
		"  error      head-evicted    head pod evicted\n" +
		"                             fix: run it\n" +
		"  warning    node-pressure\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func TestTableColorKeepsColumns(t *testing.T) {
	p := NewPainter(true)
	tb := NewTable()
	tb.Append(p.Severity("error"), "x")
	tb.Append("warning", "y")
	var b bytes.Buffer
	if err := tb.Render(&b, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "\x1b[31;1merror") {
		t.Errorf("not colored: %q", b.String())
	}
	plain := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(b.String(), "")
	if want := "error     x\nwarning   y\n"; plain != want {
		t.Errorf("without escapes got %q, want %q", plain, want)
	}
}

func TestPainterOff(t *testing.T) {
	if got := NewPainter(false).Severity("error"); got != "error" {
		t.Errorf("got %q", got)
	}
}
