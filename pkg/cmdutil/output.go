package cmdutil

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// OutputFlag is -o/--output restricted to a fixed set of formats.
type OutputFlag struct {
	Value   string
	Allowed []string
}

// AddOutputFlag registers -o with its completion; the first allowed format is the default.
func AddOutputFlag(cmd *cobra.Command, allowed ...string) *OutputFlag {
	o := &OutputFlag{Value: allowed[0], Allowed: allowed}
	cmd.Flags().StringVarP(&o.Value, "output", "o", o.Value, "Output format: "+strings.Join(allowed, "|"))
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return allowed, cobra.ShellCompDirectiveNoFileComp
	})
	return o
}

// Validate rejects a format the command does not print.
func (o *OutputFlag) Validate() error {
	if !slices.Contains(o.Allowed, o.Value) {
		return UnknownOutput(o.Value, o.Allowed...)
	}
	return nil
}

// UnknownOutput is the error for an -o the command does not print, in the same words for
// every command.
func UnknownOutput(value string, allowed ...string) error {
	return exit.Usagef("unknown output format %q: use -o %s", value, strings.Join(allowed, "|"))
}

// PrintStructured writes v as indented JSON or as YAML.
func PrintStructured(w io.Writer, format string, v any) error {
	switch format {
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	default:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
}

// Writer prints one kind of document in each -o format its command offers (helm's
// output.Writer): a command implements it once per document kind it prints, so what each format
// looks like is decided in one place, and Run only picks the document.
type Writer interface {
	Write(out io.Writer, format string) error
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
