package cmdutil

import (
	"io"
	"strings"
)

// minLastColumn is the narrowest last column worth keeping beside the others: below it, the
// last column moves under its row (see Fit).
const minLastColumn = 40

// stackIndent is how far a last column moved under its row is indented, past the table's indent.
const stackIndent = "    "

// Fit makes Render fit the table to width terminal cells. The last column (a message) is
// wrapped at spaces; when the other columns leave it fewer than minLastColumn cells, it goes
// under its row instead, wrapped to the width, and leaves the header. No line is longer than
// width: a cell that cannot fit even so is cut with "…". Fit(0) prints every cell whole.
func (t *Table) Fit(width int) { t.width = width }

// renderFit is Render for a table with a width.
func (t *Table) renderFit(w io.Writer, indent string) error {
	n := len(t.header)
	for _, r := range t.rows {
		n = max(n, len(r))
	}
	if n == 0 {
		return nil
	}
	cell := func(r []string, i int) string {
		if i < len(r) {
			return r[i]
		}
		return ""
	}
	widths := make([]int, n-1)
	measure := func(r []string) {
		for i := range widths {
			widths[i] = max(widths[i], VisibleWidth(cell(r, i)))
		}
	}
	measure(t.header)
	for _, r := range t.rows {
		measure(r)
	}
	prefix := VisibleWidth(indent)
	for _, cw := range widths {
		prefix += cw + len(columnGap)
	}
	stacked := t.width-prefix < minLastColumn

	// lead is the row's cells but the last, padded (the padding outside any color).
	lead := func(r []string) string {
		var b strings.Builder
		b.WriteString(indent)
		for i, cw := range widths {
			c := cell(r, i)
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", cw-VisibleWidth(c)) + columnGap)
		}
		return b.String()
	}
	var out []string
	emit := func(line string) {
		out = append(out, Truncate(strings.TrimRight(line, " "), t.width))
	}
	rows := t.rows
	if len(t.header) > 0 {
		rows = append([][]string{t.header}, rows...)
	}
	for ri, r := range rows {
		last := cell(r, n-1)
		isHeader := ri == 0 && len(t.header) > 0
		if !stacked {
			for li, line := range Wrap(last, t.width-prefix) {
				if li == 0 {
					emit(lead(r) + line)
				} else {
					emit(strings.Repeat(" ", prefix) + line)
				}
			}
			continue
		}
		if l := lead(r); strings.TrimSpace(l) != "" {
			emit(l)
		}
		if isHeader || last == "" {
			continue
		}
		under := indent + stackIndent
		for _, line := range Wrap(last, t.width-VisibleWidth(under)) {
			emit(under + line)
		}
	}
	for _, line := range out {
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			return err
		}
	}
	return nil
}
