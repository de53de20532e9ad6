package cmdutil

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

type leakyDoc struct{}

func (leakyDoc) Write(out io.Writer, format Format) error {
	_, err := fmt.Fprintf(out, "%s: probe error: GET http://svc:8000/ with Authorization: Bearer pr0beT0ken123 refused\n", format)
	return err
}

// A document kind whose writer prints a credential it quoted from a probe error or an Event still
// writes none: Print puts every byte through the redactor.
func TestPrintRedactsWhatAWriterForgets(t *testing.T) {
	for _, format := range []Format{FormatText, FormatJSON} {
		var b bytes.Buffer
		o := &OutputFlag{Value: format, Allowed: []Format{FormatText, FormatJSON}}
		if err := o.Print(&b, leakyDoc{}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "pr0beT0ken123") || !strings.Contains(b.String(), string(format)+": probe error") {
			t.Errorf("%s: %q", format, b.String())
		}
	}
}

// A format PrintStructured does not print is an error, not JSON by default.
func TestPrintStructuredRefusesOtherFormats(t *testing.T) {
	var b bytes.Buffer
	if err := PrintStructured(&b, FormatTable, map[string]int{"a": 1}); err == nil || b.Len() > 0 {
		t.Errorf("err %v, wrote %q", err, b.String())
	}
}
