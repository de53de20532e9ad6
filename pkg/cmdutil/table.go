package cmdutil

import (
	"bytes"
	"io"
	"regexp"
	"strings"

	"github.com/fatih/color"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Table prints rows the way kubectl does: upper-case header, left-aligned columns separated by
// three spaces, no borders, no wrapping, no trailing spaces. Cells may hold colored text: widths
// are measured without the escape codes.
type Table struct {
	header []string
	rows   [][]string
	width  int // see Fit
}

// columnGap separates columns.
const columnGap = "   "

// NewTable starts a table with these column headers (none for a headerless table).
func NewTable(header ...string) *Table { return &Table{header: header} }

// Append adds one row; missing cells are blank.
func (t *Table) Append(cells ...string) { t.rows = append(t.rows, cells) }

// Len is the number of rows.
func (t *Table) Len() int { return len(t.rows) }

// Render writes the table to w, each line prefixed with indent.
func (t *Table) Render(w io.Writer, indent string) error {
	if t.width > 0 {
		return t.renderFit(w, indent)
	}
	var buf bytes.Buffer
	pad := tw.CellPadding{Global: tw.Padding{Left: "", Right: columnGap, Overwrite: true}}
	table := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.Off, ShowHeader: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off, ShowTop: tw.Off, ShowBottom: tw.Off, ShowFooterLine: tw.Off},
			},
		})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{Alignment: tw.CellAlignment{Global: tw.AlignLeft}, Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone}, Padding: pad},
			Row:    tw.CellConfig{Alignment: tw.CellAlignment{Global: tw.AlignLeft}, Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone}, Padding: pad},
		}),
	)
	if len(t.header) > 0 {
		table.Header(t.header)
	}
	n := len(t.header)
	for _, r := range t.rows {
		n = max(n, len(r))
	}
	for _, r := range t.rows {
		row := make([]string, n)
		copy(row, r)
		if err := table.Append(row); err != nil {
			return err
		}
	}
	if err := table.Render(); err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		if _, err := io.WriteString(w, trimPadding(indent+line)+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// trailingPadding is padding at the end of a line, with the color resets tablewriter writes
// after the padding of colored cells.
var trailingPadding = regexp.MustCompile("(?: |\x1b\\[0m)+$")

// trimPadding drops the padding at the end of line; a reset it held is kept, right after the text.
func trimPadding(line string) string {
	pad := trailingPadding.FindString(line)
	line = strings.TrimSuffix(line, pad)
	if strings.Contains(pad, "\x1b") {
		line += "\x1b[0m"
	}
	return line
}

// Painter colors text when enabled (see Factory.Color) and returns it unchanged otherwise, so
// the same code prints to terminals and to pipes.
type Painter struct{ enabled bool }

// NewPainter returns a Painter; pass f.Color().
func NewPainter(enabled bool) Painter { return Painter{enabled: enabled} }

func (p Painter) paint(s string, attrs ...color.Attribute) string {
	if !p.enabled || s == "" {
		return s
	}
	c := color.New(attrs...)
	c.EnableColor() // the decision was made by the caller, not by fatih/color's own tty check
	return c.Sprint(s)
}

// Red, Yellow, Green, Cyan, Bold and Faint color s.
func (p Painter) Red(s string) string    { return p.paint(s, color.FgRed) }
func (p Painter) Yellow(s string) string { return p.paint(s, color.FgYellow) }
func (p Painter) Green(s string) string  { return p.paint(s, color.FgGreen) }
func (p Painter) Cyan(s string) string   { return p.paint(s, color.FgCyan) }
func (p Painter) Bold(s string) string   { return p.paint(s, color.Bold) }
func (p Painter) Faint(s string) string  { return p.paint(s, color.Faint) }

// Severity colors a severity word: error red, warning yellow, info cyan, ok/healthy green.
func (p Painter) Severity(s string) string {
	switch s {
	case "error", "fail", "failed":
		return p.paint(s, color.FgRed, color.Bold)
	case "warning", "warn":
		return p.Yellow(s)
	case "info":
		return p.Cyan(s)
	case "ok", "healthy", "pass", "passed":
		return p.Green(s)
	}
	return s
}
