package version

import (
	"fmt"
	"io"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
)

// formats are version's -o values, text (its default) first.
var formats = []cmdutil.Format{cmdutil.FormatText, cmdutil.FormatJSON, cmdutil.FormatYAML}

// report is version's one writer (cmdutil.Writer): Info as text lines, JSON or YAML.
type report struct {
	info       Info
	clientOnly bool
}

func (w report) Write(out io.Writer, f cmdutil.Format) error {
	switch f {
	case cmdutil.FormatJSON, cmdutil.FormatYAML:
		return cmdutil.PrintStructured(out, f, w.info)
	case cmdutil.FormatText:
		w.text(out)
		return nil
	}
	return cmdutil.UnknownOutput(f, formats...)
}

func (w report) text(out io.Writer) {
	info := w.info
	fmt.Fprintf(out, "Client Version: %s\n", info.ClientVersion.Version)
	if w.clientOnly {
		return
	}
	if info.ServerVersion != "" {
		fmt.Fprintf(out, "Server Version: %s\n", info.ServerVersion)
	}
	for _, op := range info.Operators {
		ver := op.Version
		if ver == "" {
			ver = "unknown (image " + op.Image + ")"
		}
		fmt.Fprintf(out, "KubeRay Operator: %s (%s/%s)\n", ver, op.Namespace, op.Name)
	}
	if info.ServerVersion != "" && len(info.Operators) == 0 && len(info.Problems) == 0 {
		fmt.Fprintln(out, "KubeRay Operator: not found")
	}
}
