package cmdutil

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  []string
	}{
		{"short", 10, []string{"short"}},
		{"one two three four", 9, []string{"one two", "three", "four"}},
		{"trailing space ", 40, []string{"trailing space"}},
		{"abcdefghijkl x", 5, []string{"abcde", "fghij", "kl x"}},
		{"no limit at all", 0, []string{"no limit at all"}},
	} {
		if got := Wrap(c.in, c.width); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Wrap(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

func TestWrapColorTakesNoRoom(t *testing.T) {
	p := NewPainter(true)
	got := Wrap(p.Faint("fix: run it now"), 8)
	if len(got) != 2 || VisibleWidth(got[0]) != 8 || got[0] != "\x1b[2mfix: run" || got[1] != "it now\x1b[22m" {
		t.Errorf("got %q", got)
	}
}

func TestTruncate(t *testing.T) {
	if got := Truncate("pod/very-long-name", 8); got != "pod/ver…" {
		t.Errorf("got %q", got)
	}
	if got := Truncate(NewPainter(true).Red("abcdef"), 4); got != "\x1b[31mabc…\x1b[0m" {
		t.Errorf("got %q", got)
	}
	if got := Truncate("fits", 4); got != "fits" {
		t.Errorf("got %q", got)
	}
}

// A colored last column on a line of its own ends in no spaces (tablewriter pads before its
// reset).
func TestTableColorNoTrailingSpaces(t *testing.T) {
	p := NewPainter(true)
	tb := NewTable("SEVERITY", "MESSAGE")
	tb.Append(p.Severity("error"), "a long long message here")
	tb.Append("", p.Faint("fix: short"))
	var b bytes.Buffer
	if err := tb.Render(&b, "  "); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if plain := sgr.ReplaceAllString(line, ""); strings.HasSuffix(plain, " ") {
			t.Errorf("trailing spaces: %q", line)
		}
	}
	if !strings.Contains(b.String(), "\x1b[2mfix: short\x1b[22m\x1b[0m\n") {
		t.Errorf("the fix line lost its color or kept its padding: %q", b.String())
	}
}

func TestTableFitWrapsLastColumn(t *testing.T) {
	tb := NewTable("SEVERITY", "RULE", "MESSAGE")
	tb.Append("error", "head-evicted", "head pod raycluster-a-head-abcde was evicted from node node-1 12m ago")
	tb.Append("", "", "fix: run it")
	tb.Fit(72)
	var b bytes.Buffer
	if err := tb.Render(&b, "  "); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"  SEVERITY   RULE           MESSAGE\n" +
		"  error      head-evicted   head pod raycluster-a-head-abcde was evicted\n" +
		"                            from node node-1 12m ago\n" +
		"                            fix: run it\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestTableFitStacksANarrowLastColumn(t *testing.T) {
	p := NewPainter(true)
	tb := NewTable("SEVERITY", "RULE", "OBJECT", "MESSAGE")
	tb.Append(p.Severity("warning"), "node-pressure", "node/node-1", "node node-1 running 1 Ray pod is DiskPressure: raycluster-a-head-abcde")
	tb.Append("", "", "", p.Faint("fix: move Ray pods off node-1"))
	tb.Append("info", "a-rule-with-a-name-far-too-long-for-forty-cells", "x", "m")
	tb.Fit(40)
	var b bytes.Buffer
	if err := tb.Render(&b, "  "); err != nil {
		t.Fatal(err)
	}
	plain := sgr.ReplaceAllString(b.String(), "")
	want := "" +
		"  SEVERITY   RULE                      …\n" +
		"  warning    node-pressure             …\n" +
		"      node node-1 running 1 Ray pod is\n" +
		"      DiskPressure:\n" +
		"      raycluster-a-head-abcde\n" +
		"      fix: move Ray pods off node-1\n" +
		"  info       a-rule-with-a-name-far-too…\n" +
		"      m\n"
	if plain != want {
		t.Errorf("got\n%s\nwant\n%s", plain, want)
	}
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if VisibleWidth(line) > 40 {
			t.Errorf("longer than 40: %q", line)
		}
	}
}
