package cmdutil

import (
	"bytes"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// OutputFlag is -o/--output restricted to a fixed set of formats.
type OutputFlag struct {
	Value   Format
	Allowed []Format
}

// AddOutputFlag registers -o with its completion; the first allowed format is the default.
func AddOutputFlag(cmd *cobra.Command, allowed ...Format) *OutputFlag {
	o := &OutputFlag{Value: allowed[0], Allowed: allowed}
	// A string flag to pflag (its help reads "-o, --output string"); Validate checks the value.
	cmd.Flags().StringVarP((*string)(&o.Value), "output", "o", string(o.Value), "Output format: "+joinFormats(allowed))
	_ = cmd.Flags().SetAnnotation("output", FormatsAnnotation, formatNames(allowed))
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return formatNames(allowed), cobra.ShellCompDirectiveNoFileComp
	})
	return o
}

// FormatsAnnotation marks an -o that AddOutputFlag made, with its formats: a test of the whole
// tree tells it from an -o that names a file (bundle's).
const FormatsAnnotation = "kubectl-ray/formats"

// Validate rejects a format the command does not print.
func (o *OutputFlag) Validate() error {
	if !slices.Contains(o.Allowed, o.Value) {
		return UnknownOutput(o.Value, o.Allowed...)
	}
	return nil
}

// UnknownOutput is the error for an -o the command does not print, in the same words for
// every command.
func UnknownOutput(value Format, allowed ...Format) error {
	return exit.Usagef("unknown output format %q: use -o %s", value, joinFormats(allowed))
}

func formatNames(fs []Format) []string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	return names
}

func joinFormats(fs []Format) string { return strings.Join(formatNames(fs), "|") }

// Writer prints one kind of document in each -o format its command offers (helm's
// output.Writer): a command implements it once per document kind it prints, so what each format
// looks like is decided in one place, and Run only picks the document.
type Writer interface {
	Write(out io.Writer, f Format) error
}

// Print writes doc in the format -o asked for, every byte through the redactor's shapes (a
// report quotes Events, probe errors and pod messages, which can echo a credential): a document
// kind whose writer forgets a field still writes no secret.
func (o *OutputFlag) Print(out io.Writer, doc Writer) error {
	var b bytes.Buffer
	err := doc.Write(&b, o.Value)
	if _, werr := out.Write(redact.New().Bytes(b.Bytes())); err == nil {
		err = werr
	}
	return err
}
