package chaos

import (
	"fmt"
	"io"
	"os"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
)

// withHTML writes the --report-html page, if asked, and returns the run's verdict. Validate
// checked the path, so a failure here is rare (the directory went away, the disk is full): the
// run happened, so its verdict keeps precedence, and a passing run still fails.
func withHTML(f *cmdutil.Factory, path string, verdict error, write func(io.Writer) error) error {
	if path == "" {
		return verdict
	}
	err := writeFile(path, write)
	if err == nil {
		return verdict
	}
	fmt.Fprintf(f.IOStreams.ErrOut, "error: cannot write --report-html %s: %v; the report above is complete\n", path, err)
	if verdict == nil {
		verdict = exit.Silent{Code: exit.API}
	}
	return verdict
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
