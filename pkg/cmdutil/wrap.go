package cmdutil

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// sgr matches the color escape sequences Painter writes; they take no room on the screen.
var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// VisibleWidth is how many terminal cells s takes, colors not counted.
func VisibleWidth(s string) int { return runewidth.StringWidth(sgr.ReplaceAllString(s, "")) }

// Wrap breaks s into lines of at most width cells, at spaces; a word longer than a line is cut.
// Color escapes stay where they are and take no room (a terminal keeps a color across a line
// break, so a wrapped colored phrase stays colored). No line ends in a space. width < 1 returns s
// as one line.
func Wrap(s string, width int) []string {
	if width < 1 || VisibleWidth(s) <= width {
		return []string{strings.TrimRight(s, " ")}
	}
	var lines []string
	var line strings.Builder
	used := 0
	flush := func() {
		lines = append(lines, strings.TrimRight(line.String(), " "))
		line.Reset()
		used = 0
	}
	for _, word := range strings.Split(s, " ") {
		w := VisibleWidth(word)
		switch {
		case used > 0 && used+1+w <= width:
			line.WriteString(" ")
			line.WriteString(word)
			used += 1 + w
			continue
		case used > 0:
			flush()
		}
		for w > width {
			head, rest := cut(word, width)
			line.WriteString(head)
			used = width
			flush()
			word, w = rest, VisibleWidth(rest)
		}
		line.WriteString(word)
		used += w
	}
	flush()
	return lines
}

// Truncate shortens s to at most width cells, ending it with "…" when it had to cut, and
// closes any color it cut through.
func Truncate(s string, width int) string {
	if width < 1 || VisibleWidth(s) <= width {
		return s
	}
	head, _ := cut(s, width-1)
	if sgr.MatchString(head) {
		return head + "…\x1b[0m"
	}
	return head + "…"
}

// cut splits s after width cells; color escapes before the cut stay in the head.
func cut(s string, width int) (head, rest string) {
	used := 0
	for i := 0; i < len(s); {
		if loc := sgr.FindStringIndex(s[i:]); loc != nil && loc[0] == 0 {
			i += loc[1]
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		rw := runewidth.RuneWidth(r)
		if used+rw > width {
			return s[:i], s[i:]
		}
		used += rw
		i += size
	}
	return s, ""
}
